import { afterEach, describe, expect, it, vi } from "vitest";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Registry } from "prom-client";
import { MemoryStore } from "./memory.ts";
import { SqliteStore } from "./sqlite.ts";
import { GuardedStore, type SpooledRecord } from "./guard.ts";
import { Spool } from "./spool.ts";
import { createLogger } from "../log.ts";
import { GatewayError } from "../errors.ts";
import type { StoreConfig } from "../generated/types/gateway.ts";
import type { LedgerEntry, RateCharge, Reservation, Settlement } from "./types.ts";

/**
 * A memory store that can stop answering (hang: a call made meanwhile never answers), answer late (slow: a call made
 * meanwhile runs once the mode changes, as a paused server answers when it resumes) or fail every call.
 */
class Flaky extends MemoryStore {
  private current: "ok" | "hang" | "slow" | "fail" = "ok";
  private held: (() => void)[] = [];
  released: Settlement[] = [];
  get mode() {
    return this.current;
  }
  set mode(m: "ok" | "hang" | "slow" | "fail") {
    this.current = m;
    if (m !== "slow") for (const resume of this.held.splice(0)) resume();
  }
  private gate<T>(f: () => Promise<T>): Promise<T> {
    if (this.mode === "hang") return new Promise(() => {});
    if (this.mode === "slow") return new Promise((resolve, reject) => this.held.push(() => this.gate(f).then(resolve, reject)));
    if (this.mode === "fail") return Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:6379"));
    return f();
  }
  override reserve(r: Reservation, now: number) { return this.gate(() => super.reserve(r, now)); }
  override release(s: Settlement) { return this.gate(async () => { this.released.push(s); return super.release(s); }); }
  override rateLimit(c: RateCharge[], now: number) { return this.gate(() => super.rateLimit(c, now)); }
  override record(e: LedgerEntry, s?: Settlement) { return this.gate(() => super.record(e, s)); }
  override spent(p: string, k: string, st: number) { return this.gate(() => super.spent(p, k, st)); }
  override probe() { return this.gate(() => super.probe()); }
  override usage(q: Parameters<MemoryStore["usage"]>[0]) { return this.gate(() => super.usage(q)); }
}

const entry = (id: string, costPico = 5n): LedgerEntry => ({
  generationId: id, requestId: `req_${id}`, ts: Date.now(), keyId: "k", project: "acme", endpoint: "chat", model: "m", provider: "p",
  attempts: 1, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0,
  searchUnits: 0, costUsd: "0.000000000005", costPico, latencyMs: 1, ttftMs: null, status: 200, outcome: "ok", sandbox: false, estimated: false,
});
const resv = (id: string, amountPico = 10n, limitPico = 100n): Reservation =>
  ({ project: "acme", periodKey: "total", periodStart: 0, id, amountPico, limitPico, leaseMs: 900_000 });

const guards: GuardedStore[] = [];
afterEach(async () => {
  for (const g of guards.splice(0)) await g.close();
});

async function guarded(config: Partial<StoreConfig> = {}) {
  const inner = new Flaky();
  const registry = new Registry();
  const spool = await Spool.open<SpooledRecord>(mkdtempSync(join(tmpdir(), "mg-guard-")), "ledger");
  const cfg: StoreConfig = { kind: "memory", timeout_ms: 100, probe_interval_ms: 50, ...config };
  const g = new GuardedStore(inner, { config: () => cfg, log: createLogger("silent"), registry, spool });
  guards.push(g);
  const metric = async (name: string) => (await registry.getMetricsAsJSON()).find((m) => m.name === name)?.values ?? [];
  return { inner, g, spool, metric };
}

async function until(f: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("GuardedStore", () => {
  it("a store that stops answering costs bounded waits, then, once a probe confirms it, a 503 STORE_UNAVAILABLE at once", async () => {
    const { inner, g } = await guarded();
    inner.mode = "hang";
    const t = performance.now();
    const first = await g.reserve(resv("r1"), Date.now()).catch((e) => e);
    expect(performance.now() - t).toBeLessThan(1000);
    expect(first).toBeInstanceOf(GatewayError);
    expect(first).toMatchObject({ status: 503, code: "STORE_UNAVAILABLE", retryAfter: 1, details: { reason: "timeout" } });
    // One slow answer is only a suspicion: a probe (with a longer bound) confirms it before the store counts as down.
    await until(async () => !(g as any).up, 3000);
    // Not waited on again while it is down: not sent to the store, and answered before the event loop turns.
    const sent = vi.spyOn(inner, "spent");
    const second = await Promise.race([
      g.spent("acme", "total", 0).catch((e) => e),
      new Promise((r) => setImmediate(() => r("still waiting after one event-loop turn"))),
    ]);
    expect(second).toMatchObject({ status: 503, code: "STORE_UNAVAILABLE", details: { reason: "down" } });
    expect(sent).not.toHaveBeenCalled();
    expect((await g.status()).up).toBe(false);
    inner.mode = "ok";
    await until(async () => (await g.status()).up);
  });

  it("response cache calls are bounded too: a store that does not answer a lookup fails it in timeout_ms", async () => {
    const { inner, g } = await guarded();
    inner.responseCache.get = () => new Promise(() => {});
    inner.responseCache.put = () => new Promise(() => {});
    const t = performance.now();
    await expect(g.responseCache.get("k", Date.now())).rejects.toMatchObject({ status: 503, code: "STORE_UNAVAILABLE", details: { reason: "timeout" } });
    await expect(g.responseCache.put("k", "v", 1000, Date.now())).rejects.toMatchObject({ status: 503, code: "STORE_UNAVAILABLE" });
    expect(performance.now() - t).toBeLessThan(1000);
  });

  it("spools a record the store cannot take and replays it once, with its settlement, before the store counts as up", async () => {
    const { inner, g, spool, metric } = await guarded();
    inner.mode = "fail";
    await g.record(entry("gen_1"), { project: "acme", periodKey: "total", id: "gen_1" }); // resolves: the client keeps its answer
    await g.record(entry("gen_2"));
    expect(spool.size).toBe(2);
    expect(await inner.ledger({})).toHaveLength(0);
    expect((await metric("gateway_ledger_spooled_total")).find((v) => v.labels.kept === "durable")?.value).toBe(2);
    inner.mode = "ok";
    await until(async () => (await g.status()).up);
    expect(spool.size).toBe(0);
    const ledger = await inner.ledger({});
    expect(ledger.map((e) => e.generationId).sort()).toEqual(["gen_1", "gen_2"]);
    expect(ledger[0]!.costPico).toBe(5n);
    expect(await inner.spent("acme", "total", 0)).toBe(10n);
    // A replay after a crash between the store's write and the spool's deletion of the segment is not counted twice.
    await inner.record(entry("gen_1"));
    expect(await inner.spent("acme", "total", 0)).toBe(10n);
  });

  it("a long outage: spooled records wait on disk, not in memory; a fail_open budget counts their spend; the replay stores each once, in order", async () => {
    const { inner, g, spool } = await guarded({ when_unavailable: { budget: "fail_open" } });
    expect((await g.reserve(resv("before", 10n, 1_000_000n), Date.now())).spentPico).toBe(0n);
    await g.release({ project: "acme", periodKey: "total", id: "before" });
    inner.mode = "fail";
    const ids = Array.from({ length: 3000 }, (_, i) => `gen_${String(i).padStart(4, "0")}`);
    for (let i = 0; i < ids.length; i += 500) await Promise.all(ids.slice(i, i + 500).map((id) => g.record(entry(id, 5n))));
    expect(spool.size).toBe(3000);
    expect(spool.inMemory).toEqual({ records: 0, bytes: 0 });
    // The spend of the records the store has not seen yet still counts against the budget.
    expect(await g.reserve(resv("during", 10n, 1_000_000n), Date.now())).toMatchObject({ ok: true, spentPico: 15_000n });
    let most = 0;
    const record = inner.record.bind(inner);
    inner.record = (e, s) => ((most = Math.max(most, spool.inMemory.records)), record(e, s));
    inner.mode = "ok";
    await until(async () => (await g.status()).up, 10_000);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(200); // one replay batch
    expect((await inner.ledger({})).map((e) => e.generationId)).toEqual(ids);
    expect(await inner.spent("acme", "total", 0)).toBe(15_000n);
  });

  it("gives back, once the store answers, a reservation whose fate it could not confirm", async () => {
    const { inner, g } = await guarded();
    inner.mode = "hang";
    await expect(g.reserve(resv("r1"), Date.now())).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    await until(async () => !(g as any).up, 3000);
    await g.release({ project: "acme", periodKey: "total", id: "r2" }); // never throws
    inner.mode = "ok";
    await until(async () => (await g.status()).up);
    expect(inner.released.map((s) => s.id).sort()).toEqual(["r1", "r2"]);
  });

  it("a call that was only slow does not take the store down; its spooled record is handed over", async () => {
    const { inner, g, spool, metric } = await guarded();
    inner.mode = "slow";
    const slow = g.record(entry("gen_slow"));
    // The call times out (100 ms) and is spooled; the confirming probe, sent meanwhile, waits like every call.
    await until(() => spool.size === 1);
    inner.mode = "ok"; // the store answers again, well within the probe's longer bound: the late write lands too
    await slow;
    await until(async () => spool.size === 0);
    expect((await g.status()).up).toBe(true);
    // The only failure counted is the slow call's timeout: the probe succeeded, so the store never counted as down.
    expect((await metric("gateway_store_failures_total")).map((v) => ({ ...v.labels, value: v.value })))
      .toEqual([{ operation: "record", reason: "timeout", value: 1 }]);
    // The late write and the handed-over record are one generation: counted once.
    expect((await inner.ledger({})).map((e) => e.generationId)).toEqual(["gen_slow"]);
  });

  it("rate limits fail open by default: this process counts the window, and says so", async () => {
    const { inner, g, metric } = await guarded();
    inner.mode = "fail";
    const charge = [{ key: "key:acme:k1:rpm", limit: 2, cost: 1 }];
    const rs = [];
    for (let i = 0; i < 3; i++) rs.push((await g.rateLimit(charge, Date.now())).ok);
    expect(rs).toEqual([true, true, false]);
    const decisions = await metric("gateway_store_unavailable_decisions_total");
    expect(decisions.find((v) => v.labels.decision === "allowed_locally")?.value).toBe(2);
    expect(decisions.find((v) => v.labels.decision === "refused_locally")?.value).toBe(1);
  });

  it("fail_closed rate limits and budgets refuse with 503; fail_open budgets reserve against the last spend seen", async () => {
    const closed = await guarded({ when_unavailable: { rate_limit: "fail_closed" } });
    closed.inner.mode = "fail";
    await expect(closed.g.rateLimit([{ key: "k", limit: 5, cost: 1 }], Date.now())).rejects.toMatchObject({ status: 503, code: "STORE_UNAVAILABLE" });
    await expect(closed.g.reserve(resv("r"), Date.now())).rejects.toMatchObject({ status: 503 });

    const open = await guarded({ when_unavailable: { budget: "fail_open" } });
    await open.inner.record(entry("seed", 60n));
    expect((await open.g.reserve(resv("a", 10n), Date.now())).spentPico).toBe(60n); // seen while up
    open.inner.mode = "fail";
    await open.g.record(entry("spooled", 20n)); // spooled: counts locally
    const b = await open.g.reserve(resv("b", 10n), Date.now());
    expect(b).toMatchObject({ ok: true, spentPico: 80n });
    const c = await open.g.reserve(resv("c", 15n), Date.now());
    expect(c.ok).toBe(false); // 80 spent + 10 held + 15 > 100
  });

  it("the operator plane's reads: a bad query is the reader's 400; a failing store a 503, and it is not marked down for it", async () => {
    const { inner, g } = await guarded();
    await g.record(entry("r1", 7n));
    const q = { since: Date.now() - 3_600_000, until: Date.now() + 3_600_000, groupBy: [], bucket: "none" as const };
    expect((await g.usage(q))[0]).toMatchObject({ requests: 1, costPico: 7n });
    await expect(g.usage({ ...q, bucket: "month" as "day" })).rejects.toMatchObject({ status: 400, details: { field: "bucket" } });
    inner.mode = "fail";
    const err = await g.usage(q).then(() => undefined, (e) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ status: 503, code: "STORE_UNAVAILABLE" });
    inner.mode = "ok";
    // Requests never noticed: the store stayed up (a report failing is not an outage).
    expect((await g.status()).up).toBe(true);
    expect((await g.reserve(resv("x"), Date.now())).ok).toBe(true);
  });
});

describe("GuardedStore: a record no store can hold is set aside, never retried forever", () => {
  const rejected = (dir: string) =>
    existsSync(join(dir, "rejected-ledger.jsonl")) ? readFileSync(join(dir, "rejected-ledger.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)) : [];

  it("a spooled record whose cost overflows SQLite's 64-bit column: the replay at start sets it aside, the rest lands, the store is up", async () => {
    // What a process left behind when an upstream answered `prompt_tokens: 1e20` (the record failed, was spooled, and
    // its replay failed the same way at every probe and every restart: the store stayed down for every project).
    const dir = mkdtempSync(join(tmpdir(), "mg-guard-rejected-"));
    const left = await Spool.open<SpooledRecord>(dir, "ledger");
    const bad = entry("gen_bad", 10n ** 26n);
    await left.append("gen_ok1", { entry: { ...entry("gen_ok1"), costPico: "5" } });
    await left.append("gen_bad", { entry: { ...bad, costPico: bad.costPico.toString() }, settle: { project: "acme", periodKey: "total", id: "gen_bad" } });
    await left.append("gen_ok2", { entry: { ...entry("gen_ok2"), costPico: "5" } });
    await left.close();

    const inner = new SqliteStore(join(dir, "gateway.db"));
    const registry = new Registry();
    const spool = await Spool.open<SpooledRecord>(dir, "ledger");
    const g = new GuardedStore(inner, { config: () => ({ kind: "sqlite", timeout_ms: 200, probe_interval_ms: 50 }), log: createLogger("silent"), registry, spool });
    guards.push(g);
    await g.start();
    await until(async () => (await g.status()).up, 2000);
    expect(spool.size).toBe(0);
    expect((await inner.ledger({})).map((e) => e.generationId).sort()).toEqual(["gen_ok1", "gen_ok2"]);
    expect(await inner.spent("acme", "total", 0)).toBe(10n);
    const aside = rejected(dir);
    expect(aside).toHaveLength(1);
    expect(aside[0]).toMatchObject({ record: { entry: { generationId: "gen_bad", costPico: String(10n ** 26n) } } });
    expect(aside[0].error).toMatch(/cost_pico/);
    expect((await registry.getMetricsAsJSON()).find((m) => m.name === "gateway_ledger_rejected_total")?.values[0]?.value).toBe(1);
    // A budgeted request is served again.
    expect((await g.reserve(resv("after"), Date.now())).ok).toBe(true);
  });

  it("a record the store refuses every time while answering probes is set aside; a store that is down keeps everything", async () => {
    const { inner, g, spool } = await guarded();
    const refused = new Set(["gen_poison"]);
    const record = inner.record.bind(inner);
    inner.record = (e, s) => (refused.has(e.generationId) && inner.mode === "ok" ? Promise.reject(new Error("SQLITE_CONSTRAINT: this record, every time")) : record(e, s));
    inner.mode = "fail";
    for (const id of ["gen_a", "gen_poison", "gen_b", "gen_c"]) await g.record(entry(id));
    expect(spool.size).toBe(4);
    await until(async () => !(g as any).up);
    // Down: the replay fails on the store, not on a record, and nothing is set aside.
    await new Promise((r) => setTimeout(r, 200));
    expect(spool.size).toBe(4);
    expect(rejected(spool.dir)).toEqual([]);
    inner.mode = "ok";
    await until(async () => (await g.status()).up);
    expect(spool.size).toBe(0);
    expect((await inner.ledger({})).map((e) => e.generationId).sort()).toEqual(["gen_a", "gen_b", "gen_c"]);
    expect(rejected(spool.dir).map((r) => r.record.entry.generationId)).toEqual(["gen_poison"]);
  });

  it("a record with a cost past 64 bits, written while the store is up, is set aside at once: not spooled, the store stays up", async () => {
    const { inner, g, spool, metric } = await guarded();
    await g.record(entry("gen_huge", 2n ** 64n), { project: "acme", periodKey: "total", id: "gen_huge" });
    await g.record(entry("gen_negative", -999_990_000_000n));
    expect(spool.size).toBe(0);
    expect((await g.status()).up).toBe(true);
    expect(await inner.spent("acme", "total", 0)).toBe(0n); // never lowered by a negative cost
    expect(inner.released.map((s) => s.id)).toEqual(["gen_huge"]); // its reservation is given back
    expect(rejected(spool.dir).map((r) => r.record.entry.generationId)).toEqual(["gen_huge", "gen_negative"]);
    expect((await metric("gateway_ledger_rejected_total"))[0]?.value).toBe(2);
  });
});

describe("GuardedStore: store.probe_interval_ms is read at start", () => {
  it("a reload that changes it (reported as waiting for a restart) changes neither the Retry-After of a 503 nor the probing", async () => {
    const inner = new Flaky();
    const spool = await Spool.open<SpooledRecord>(mkdtempSync(join(tmpdir(), "mg-guard-")), "ledger");
    let cfg: StoreConfig = { kind: "memory", timeout_ms: 100, probe_interval_ms: 50 };
    const g = new GuardedStore(inner, { config: () => cfg, log: createLogger("silent"), registry: new Registry(), spool });
    guards.push(g);
    cfg = { ...cfg, probe_interval_ms: 7000 }; // the reloaded config
    inner.mode = "fail";
    expect(await g.reserve(resv("r1"), Date.now()).catch((e) => e)).toMatchObject({ status: 503, retryAfter: 1 });
    inner.mode = "ok";
    await until(async () => (await g.status()).up); // probed every 50 ms as at start, not in 7 s
  });
});
