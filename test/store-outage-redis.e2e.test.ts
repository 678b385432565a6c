// A real redis-server misbehaving under load, behind real gateway processes (two replicas, then `--workers 2`):
// paused (SIGSTOP: the connection stays open, nothing answers), killed and restarted with its AOF, and restarted
// without its data. 20 clients keep sending, half on a project with a budget (fails closed: 503 STORE_UNAVAILABLE),
// half on one with rate limits only (fails open on local accounting: answered, its records spooled).
// What must hold: no request waits on the store longer than the bound; no 500; readiness goes 503 and comes back;
// every answered request is in the ledger exactly once after recovery; no reservation is left held; a Redis that
// lost the gateway's state is never used as if nothing happened.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import YAML from "yaml";
import { ulid } from "ulid";
import { Redis } from "ioredis";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";
import { auth, chat, KEY, OTHER, policyConfig } from "./helpers/policy-config.ts";
import { ledgerGaps, outageReport, startLoad } from "./helpers/outage-load.ts";
import { RedisStore } from "../core/store/redis.ts";
import { periodOf } from "../core/store/periods.ts";
import { sleep, until } from "./helpers/until.ts";
import { awayFromPeriodEnd } from "./helpers/period-end.ts";

/** store.timeout_ms of these gateways: no request waits on the store longer than this. */
const BOUND_MS = 250;
/** The outage: 5 s. Without the bound, every request waited as long as the outage lasted. */
const OUTAGE_MS = 5000;
/**
 * What a request may take end to end meanwhile: one bounded store wait (250 ms), the fake upstream's few ms, a spool
 * fsync, and the scheduling of a 2-core machine running two gateways (or a primary and two workers), Redis and 20
 * closed-loop clients whose 503s come back in milliseconds. Half the outage: a request that waited for the store would
 * take all of it.
 */
const MAX_REQUEST_MS = OUTAGE_MS / 2;

/** /readyz answers 200 and the gateway's spool is empty (everything replayed). */
async function recovered(url: string): Promise<void> {
  let last = "";
  try {
    await until(`${url} to be ready with an empty spool`, async () => {
      const r = await fetch(`${url}/readyz`);
      last = await r.text();
      return r.status === 200 && JSON.parse(last).checks.store.spool.records === 0 ? true : undefined;
    });
  } catch (err) {
    throw new Error(`${(err as Error).message}; last /readyz: ${last}`);
  }
}

describe("Redis store outages under load, two gateway processes", () => {
  let redis: TestRedis;
  let fake: FakeOpenAI;
  let dir: string;
  let configFile: string;
  let gws: ChildGateway[] = [];
  let raw: Redis;
  const prefix = `mgo-${ulid()}:`;
  // acme's budget is a month's, and its spend and holds are read under the month's key: each test (up to 90 s) runs
  // within one month, and reads the month it runs in.
  let month: string;
  beforeEach(async () => {
    await awayFromPeriodEnd("month", 95_000);
    month = periodOf("month", Date.now()).key;
  }, 100_000);

  beforeAll(async () => {
    redis = await startRedis();
    fake = await startFakeOpenAI({ chunkDelayMs: 2 });
    dir = mkdtempSync(join(tmpdir(), "mg-outage-"));
    configFile = join(dir, "gateway.yaml");
    writeFileSync(configFile, YAML.stringify(policyConfig(fake.baseUrl, {
      store: { kind: "redis", url: redis.url, prefix, timeout_ms: BOUND_MS, probe_interval_ms: 200 },
      acme: { budget: { usd: "1000", period: "month" }, rate_limits: { rpm: 1_000_000, tpm: 1_000_000_000 } },
      other: { rate_limits: { rpm: 1_000_000, tpm: 1_000_000_000 } },
    })));
    gws = await Promise.all([startChildGateway(configFile), startChildGateway(configFile)]);
    raw = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 100 });
    raw.on("error", () => {});
  }, 60_000);
  afterAll(async () => {
    for (const g of gws) await g.kill9();
    raw?.disconnect();
    await fake?.close();
    await redis?.stop();
  });

  /** 20 clients through `bases`; `outage` runs once traffic flows; everything after it until all is replayed. */
  async function underLoad(bases: string[], readyUrl: string, outage: () => Promise<void>) {
    const upstreamBefore = fake.requests.length;
    const load = startLoad(bases, { clients: 20, keys: [KEY, OTHER], readyUrl });
    await until("traffic", async () => (load.sent.filter((s) => s.answered).length >= 40 ? true : undefined));
    const from = performance.now();
    await outage();
    const to = performance.now();
    await until("answers again", async () => (load.sent.some((s) => s.answered && s.at > to) ? true : undefined));
    await until("readiness again", async () => (load.ready.some((x) => x.status === 200 && x.at > to) ? true : undefined));
    await sleep(500);
    await load.stop();
    for (const url of new Set(bases.map((b) => b.replace(/\/api\/v1$/, "")))) await recovered(url);
    const report = outageReport(load, { from, to });
    const store = await RedisStore.connect(redis.url, prefix);
    try {
      const ledger = await store.ledger({});
      const ids = ledger.map((e) => e.requestId);
      const mine = new Set(load.sent.map((s) => s.requestId));
      return { from, load, report, ledger: ledger.filter((e) => mine.has(e.requestId)), gaps: ledgerGaps(load.sent, ids), upstream: fake.requests.length - upstreamBefore };
    } finally {
      await store.close();
    }
  }

  function expectHeld(r: Awaited<ReturnType<typeof underLoad>>) {
    const { load, report, gaps } = r;
    console.log("outage report", JSON.stringify(report));
    if (process.env.DEBUG_OUTAGE) {
      const all = gws.map((g) => g.output()).join("");
      for (const x of load.sent.filter((s) => s.end >= r.from).sort((a, b) => b.ms - a.ms).slice(0, 6)) {
        const line = all.split("\n").find((l) => l.includes(x.requestId) && l.includes('"msg":"request"'));
        console.log("SLOW", Math.round(x.at - r.from), Math.round(x.ms), x.status, x.stream, line?.match(/"durationMs":[\d.]+/)?.[0], line?.match(/"ttfbMs":[\d.]+/)?.[0]);
      }
    }
    // Only answers and the store's own 503: no 500, no dropped connection, no hang.
    const kinds = new Set(load.sent.filter((s) => s.status !== 200).map((s) => `${s.status} ${s.code}`));
    expect([...kinds].filter((k) => k !== "503 STORE_UNAVAILABLE")).toEqual([]);
    for (const s of load.sent.filter((x) => x.status === 503)) expect(Number(s.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(report.failed).toBeGreaterThan(0); // budgets failed closed
    expect(report.answeredDuringOutage).toBeGreaterThan(0); // rate limits failed open
    expect(report.slowestMs).toBeLessThan(MAX_REQUEST_MS);
    expect(report.readinessWent503).toBe(true);
    expect(report.readyAgainMs).toBeDefined();
    // Every request a provider answered is in the ledger exactly once.
    expect(gaps.lost).toEqual([]);
    expect(gaps.twice).toEqual([]);
    expect(r.ledger.length).toBe(r.upstream);
  }

  it("SIGSTOP for 4 s: every request answered or refused within the bound; nothing lost; readiness 503 and back", async () => {
    const r = await underLoad(gws.map((g) => g.baseURL), `${gws[0]!.url}/readyz`, async () => {
      redis.pause();
      await sleep(OUTAGE_MS);
      redis.resume();
    });
    expectHeld(r);
    // Reservations of refused and spooled requests were given back when Redis answered, not after their lease.
    await raw.connect().catch(() => {});
    expect(await raw.hlen(`${prefix}resv:acme:${month}`)).toBe(0);
    // Every fail_open decision was logged.
    expect(gws.map((g) => g.output()).join("")).toMatch(/"policy":"rate_limit","decision":"allowed_locally"/);
    expect(gws[0]!.output()).toContain("store available again");
  }, 90_000);

  it("SIGKILL, restarted with its AOF: spend survives, spooled records are counted once", async () => {
    const store = await RedisStore.connect(redis.url, prefix);
    const spentBefore = await store.spent("acme", month, 0);
    await store.close();
    const r = await underLoad(gws.map((g) => g.baseURL), `${gws[1]!.url}/readyz`, async () => {
      await redis.kill();
      await sleep(OUTAGE_MS);
      await redis.restart({ aof: true });
    });
    expectHeld(r);
    const after = await RedisStore.connect(redis.url, prefix);
    try {
      const spent = await after.spent("acme", month, 0);
      const costs = r.ledger.filter((e) => e.project === "acme").reduce((s, e) => s + e.costPico, 0n);
      expect(spentBefore > 0n).toBe(true);
      // Spend from before the crash is still there, and every new record was added exactly once.
      expect(spent).toBe(spentBefore + costs);
    } finally {
      await after.close();
    }
    await raw.connect().catch(() => {});
    expect(await raw.hlen(`${prefix}resv:acme:${month}`)).toBe(0);
  }, 90_000);

  it("--workers 2, Redis paused: the same bound, nothing lost", async () => {
    const cluster = await startChildGateway(configFile, {}, [], { args: ["--workers", "2"] });
    try {
      const r = await underLoad([cluster.baseURL], `${cluster.url}/readyz`, async () => {
        redis.pause();
        await sleep(OUTAGE_MS);
        redis.resume();
      });
      expectHeld(r);
      // Both workers served (and spooled: one spool directory, one file per process).
      expect(new Set(r.load.sent.map((s) => s.worker))).toEqual(new Set(["1", "2"]));
    } finally {
      await cluster.stop();
    }
  }, 90_000);

  it("restarted without its data: budgets are refused (state lost), never reset; a restart of the gateway is refused", async () => {
    await redis.restart({ aof: false, freshDir: true });
    const gw = gws[0]!;
    const r = await until("the budget to be refused", async () => {
      const res = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...auth(KEY) }, body: JSON.stringify(chat()) });
      const body = (await res.json()) as any;
      return res.status === 503 && body.error.details?.reason === "state_lost" ? body : undefined;
    });
    expect(r.error.code).toBe("STORE_UNAVAILABLE");
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as any).checks.store).toMatchObject({ status: "down", reason: "state_lost" });
    await until("the log line", async () => (gw.output().includes("store has lost the gateway's state") ? true : undefined), 5000);
    // Answers still flow for policies that fail open, and their records wait in the spool.
    const other = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...auth(OTHER) }, body: JSON.stringify(chat()) });
    expect(other.status).toBe(200);

    // A new gateway process refuses this Redis: no persistence.
    await expect(startChildGateway(configFile)).rejects.toThrow(/runs without appendonly \(AOF\)/);
    // With persistence but empty, it still refuses: this machine remembers the state it saw there.
    await redis.restart({ aof: true, freshDir: true });
    await expect(startChildGateway(configFile)).rejects.toThrow(/no longer holds the state this gateway last saw in it/);
  }, 90_000);
});
