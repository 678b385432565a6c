// A spool that cannot be written: refused (or said) at start, and records held only in memory at close are given
// a last chance, then reported with their ids and written out for a replay — never dropped with a clean exit.
import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { SqliteStore } from "./sqlite.ts";
import { GuardedStore, UnsavedRecordsError, type SpooledRecord } from "./guard.ts";
import { Spool } from "./spool.ts";
import { captureLogger } from "../../test/helpers/log-capture.ts";
import type { StoreConfig } from "../generated/types/gateway.ts";
import type { LedgerEntry } from "./types.ts";

const entry = (id: string): LedgerEntry => ({
  generationId: id, requestId: `req_${id}`, ts: Date.now(), keyId: "k", project: "acme", endpoint: "chat", model: "m", provider: "p",
  attempts: 1, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0,
  searchUnits: 0, costUsd: "0.000000000005", costPico: 5n, latencyMs: 1, ttftMs: null, status: 200, outcome: "ok", sandbox: false, estimated: false,
});

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c().catch(() => {});
});

/** A SQLite store whose writes fail while `down` (a full disk), and a spool in `spoolDir`. */
async function setup(spoolDir: string, config: Partial<StoreConfig> = {}, o: { fallbackDir?: string; lastChanceMs?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "mg-unsaved-db-"));
  const dbPath = join(dir, "gateway.db");
  const inner = new SqliteStore(dbPath);
  const state = { down: false };
  const full = () => Promise.reject(new Error("SQLITE_FULL: database or disk is full"));
  const record = inner.record.bind(inner);
  const probe = inner.probe.bind(inner);
  inner.record = (e, s) => (state.down ? full() : record(e, s));
  inner.probe = () => (state.down ? full() : probe());
  const { logger, log } = captureLogger("info");
  const spool = await Spool.open<SpooledRecord>(spoolDir, "ledger", logger);
  const cfg: StoreConfig = { kind: "sqlite", timeout_ms: 100, probe_interval_ms: 50, ...config };
  const g = new GuardedStore(inner, { config: () => cfg, log: logger, registry: new Registry(), spool, ...o });
  closers.push(() => g.close());
  return { inner, g, state, log, spool, dbPath };
}

/** A spool_dir that cannot be used even by root: a path under a regular file (ENOTDIR). */
function unusableDir(): string {
  const f = join(mkdtempSync(join(tmpdir(), "mg-unsaved-")), "not-a-dir");
  writeFileSync(f, "");
  return join(f, "spool");
}

describe("GuardedStore: a spool that cannot be written", () => {
  it("refuses to start with require_persistence (the default); with it false, starts and says so at error", async () => {
    const strict = await setup(unusableDir());
    await expect(strict.g.start()).rejects.toThrow(/spool_dir .* cannot be written.*require_persistence: false/s);

    const lax = await setup(unusableDir(), { require_persistence: false });
    await lax.g.start();
    const said = lax.log.records().find((r) => /spool_dir .* cannot be written/.test(r.msg));
    expect(said?.level).toBe(50); // error
  });

  it("a writable spool_dir starts without a word about it", async () => {
    const ok = await setup(mkdtempSync(join(tmpdir(), "mg-unsaved-ok-")));
    await ok.g.start();
    expect(ok.log.records().filter((r) => /spool/.test(r.msg))).toEqual([]);
  });

  it("at close, records held only in memory are logged with their ids, written beside the config, and the close fails; the file replays", async () => {
    const configDir = mkdtempSync(join(tmpdir(), "mg-unsaved-cfg-"));
    const { g, state, log } = await setup(unusableDir(), { require_persistence: false }, { fallbackDir: configDir, lastChanceMs: 300 });
    state.down = true;
    for (const id of ["gen_1", "gen_2", "gen_3"]) await g.record(entry(id)); // each client got its answer
    expect((await g.status()).spool.records).toBe(3);

    const started = Date.now();
    const err = await g.close().then(() => undefined, (e) => e);
    expect(err).toBeInstanceOf(UnsavedRecordsError);
    expect(err.records).toBe(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250); // the last chance was given, and bounded
    expect(Date.now() - started).toBeLessThan(3000);
    const line = log.records().find((r) => /could not be saved/.test(r.msg));
    expect(line?.level).toBe(50);
    expect(line?.records).toBe(3);
    expect(line?.generationIds.sort()).toEqual(["gen_1", "gen_2", "gen_3"]);
    const files = readdirSync(configDir).filter((f) => f.endsWith(".jsonl"));
    expect(files).toHaveLength(1);
    expect(line?.file).toBe(join(configDir, files[0]!));

    // Moved into a working spool_dir, the next start replays them into the store.
    const spoolDir = mkdtempSync(join(tmpdir(), "mg-unsaved-next-"));
    renameSync(join(configDir, files[0]!), join(spoolDir, files[0]!));
    const next = await setup(spoolDir);
    await next.g.start();
    expect((await next.inner.ledger({})).map((e) => e.generationId).sort()).toEqual(["gen_1", "gen_2", "gen_3"]);
    expect(next.spool.size).toBe(0);
  });

  it("with no writable place beside the config, the records go to stderr as JSON lines", async () => {
    const { g, state } = await setup(unusableDir(), { require_persistence: false }, { fallbackDir: unusableDir(), lastChanceMs: 100 });
    state.down = true;
    await g.record(entry("gen_x"));
    const written: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      await expect(g.close()).rejects.toBeInstanceOf(UnsavedRecordsError);
    } finally {
      process.stderr.write = write;
    }
    const lines = written.join("").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines).toMatchObject([{ k: "gen_x", v: { entry: { generationId: "gen_x", costPico: "5" } } }]);
  });

  it("the records are written out before the last chance (a kill during it leaves them), and the file goes once the store takes them", async () => {
    const configDir = mkdtempSync(join(tmpdir(), "mg-unsaved-early-"));
    const { g, state, log, dbPath } = await setup(unusableDir(), { require_persistence: false }, { fallbackDir: configDir, lastChanceMs: 5000 });
    state.down = true;
    await g.record(entry("gen_1"));
    await g.record(entry("gen_2"));
    const closing = g.close();
    const files = () => readdirSync(configDir).filter((f) => f.endsWith(".jsonl"));
    for (const end = Date.now() + 2000; !files().length && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
    // Mid-wait: the file holds both records and their ids are logged, as a SIGKILL now would leave them.
    expect(files()).toHaveLength(1);
    const file = join(configDir, files()[0]!);
    expect(readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l).k).sort()).toEqual(["gen_1", "gen_2"]);
    expect(log.records().find((r) => /written out for a replay/.test(r.msg))?.generationIds.sort()).toEqual(["gen_1", "gen_2"]);
    state.down = false;
    await closing; // taken after all: no error
    expect(existsSync(file)).toBe(false);
    const after = new SqliteStore(dbPath);
    closers.push(() => after.close());
    expect((await after.ledger({})).map((e) => e.generationId).sort()).toEqual(["gen_1", "gen_2"]);
  });

  it("saveHeldNow (a second signal's exit) writes the records held in memory at once, synchronously, and only once", async () => {
    const configDir = mkdtempSync(join(tmpdir(), "mg-unsaved-now-"));
    const { g, state, log } = await setup(unusableDir(), { require_persistence: false }, { fallbackDir: configDir, lastChanceMs: 100 });
    state.down = true;
    await g.record(entry("gen_1"));
    await g.record(entry("gen_2"));
    const saved = g.saveHeldNow(); // no await: the process exits right after it
    expect(saved?.generationIds.sort()).toEqual(["gen_1", "gen_2"]);
    const files = readdirSync(configDir).filter((f) => f.endsWith(".jsonl"));
    expect(files).toHaveLength(1);
    expect(saved?.writtenTo).toBe(join(configDir, files[0]!));
    expect(readFileSync(saved!.writtenTo, "utf8").trim().split("\n")).toHaveLength(2);
    expect(log.records().find((r) => /immediate exit/.test(r.msg))?.level).toBe(50);
    expect(g.saveHeldNow()?.writtenTo).toBe(saved?.writtenTo); // already written: no second file
    expect(readdirSync(configDir).filter((f) => f.endsWith(".jsonl"))).toHaveLength(1);
  });

  it("saveHeldNow writes nothing when the spool's disk holds the records", async () => {
    const configDir = mkdtempSync(join(tmpdir(), "mg-unsaved-none-"));
    const { g, state } = await setup(mkdtempSync(join(tmpdir(), "mg-unsaved-spool-")), {}, { fallbackDir: configDir });
    state.down = true;
    await g.record(entry("gen_1"));
    expect(g.saveHeldNow()).toBeUndefined();
    expect(readdirSync(configDir)).toEqual([]);
  });

  it("a store that answers again during the last chance takes the records, and the close succeeds", async () => {
    const { g, state, dbPath } = await setup(unusableDir(), { require_persistence: false }, { lastChanceMs: 3000 });
    state.down = true;
    await g.record(entry("gen_1"));
    await g.record(entry("gen_2"));
    setTimeout(() => (state.down = false), 200);
    await g.close();
    const after = new SqliteStore(dbPath);
    closers.push(() => after.close());
    expect((await after.ledger({})).map((e) => e.generationId).sort()).toEqual(["gen_1", "gen_2"]);
  });

  it("a store that is down with a working spool closes at once, as before: the next start replays", async () => {
    const spoolDir = mkdtempSync(join(tmpdir(), "mg-unsaved-durable-"));
    const { g, state } = await setup(spoolDir, {}, { lastChanceMs: 3000 });
    state.down = true;
    await g.record(entry("gen_1"));
    const started = Date.now();
    await g.close();
    expect(Date.now() - started).toBeLessThan(1000);
    const lines = readdirSync(spoolDir).filter((f) => f.startsWith("ledger.")).flatMap((f) => readFileSync(join(spoolDir, f), "utf8").trim().split("\n"));
    expect(lines.map((l) => JSON.parse(l).k)).toContain("gen_1");
  });

  it("a store that is down at close with a long outage's records spooled closes, reading none back; they stay in the spool for the next start", async () => {
    const spoolDir = mkdtempSync(join(tmpdir(), "mg-unsaved-long-"));
    const { g, state, spool } = await setup(spoolDir, {}, { lastChanceMs: 3000 });
    state.down = true;
    await g.record(entry("gen_first")); // the store is marked down
    const N = 150_000;
    for (let i = 0; i < N; i += 5000) {
      await Promise.all(Array.from({ length: 5000 }, (_, j) => spool.append(`gen_${i + j}`, { entry: { ...entry(`gen_${i + j}`), costPico: "5" } })));
    }
    await g.close(); // was: RangeError (Maximum call stack size exceeded) from reading the whole spool into one array
    expect(spool.inMemory).toEqual({ records: 0, bytes: 0 });
    const lines = readdirSync(spoolDir).filter((f) => f.startsWith("ledger.")).reduce((n, f) => n + readFileSync(join(spoolDir, f), "utf8").split("\n").filter(Boolean).length, 0);
    expect(lines).toBe(N + 1);
  });
});
