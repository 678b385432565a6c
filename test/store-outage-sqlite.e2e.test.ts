// The shipped store (SQLite) on a real filesystem that fills up, and one that goes read-only the way a failing
// disk does, under 20 clients, with the spool on another filesystem (as the docs advise). A gateway process serves
// throughout: budgeted requests get a fast 503 STORE_UNAVAILABLE, the others are answered and their records spooled;
// readiness goes 503; once the disk is usable again (room freed; or, read-only, repaired and a new process started)
// every answered request is in the ledger exactly once. And a damaged ledger file is refused at start.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, openSync, writeFileSync, writeSync, closeSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import YAML from "yaml";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";
import { KEY, OTHER, policyConfig } from "./helpers/policy-config.ts";
import { ledgerGaps, outageReport, startLoad, type Load } from "./helpers/outage-load.ts";
import { loopFs, type LoopFs } from "./helpers/loop-fs.ts";
import { SqliteStore } from "../core/store/sqlite.ts";
import { sleep, until } from "./helpers/until.ts";

const BOUND_MS = 250;
/** See store-outage-redis.e2e.test.ts: one bounded store wait plus scheduling slack on a loaded 2-core machine. */
const MAX_REQUEST_MS = 2500;

const fs = loopFs(32);
const skip = "skip" in fs ? fs.skip : undefined;
if (skip) console.warn(`store-outage-sqlite: skipped — ${skip}`);

describe.skipIf(skip !== undefined)("SQLite store on a filesystem that fills up or goes read-only", () => {
  const disk = fs as LoopFs;
  let fake: FakeOpenAI;
  let configFile: string;
  let dbPath: string;
  let gw: ChildGateway | undefined;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ chunkDelayMs: 2 });
    const dir = mkdtempSync(join(tmpdir(), "mg-sqlite-outage-"));
    configFile = join(dir, "gateway.yaml");
    dbPath = join(disk.dir, "gateway.db");
    writeFileSync(configFile, YAML.stringify(policyConfig(fake.baseUrl, {
      // The spool on another filesystem than the ledger: a full or read-only disk must not take both.
      store: { kind: "sqlite", path: dbPath, spool_dir: join(dir, "spool"), timeout_ms: BOUND_MS, probe_interval_ms: 200 },
      acme: { budget: { usd: "1000", period: "month" } },
      other: { rate_limits: { rpm: 1_000_000 } },
    })));
  });
  // A test that failed before its own stop leaves its gateway serving the file: the next test's start would be
  // refused ("another gateway process is serving"), failing it for the first one's reason.
  afterEach(async () => {
    await gw?.kill9();
    gw = undefined;
  });
  afterAll(async () => {
    await gw?.kill9();
    await fake?.close();
    disk.remove();
  });

  async function ledgerIds(): Promise<string[]> {
    const store = new SqliteStore(dbPath);
    try {
      return (await store.ledger({})).map((e) => e.requestId);
    } finally {
      await store.close();
    }
  }

  function expectHeld(load: Load, from: number, to: number) {
    const report = outageReport(load, { from, to });
    console.log("sqlite outage report", JSON.stringify(report));
    const kinds = new Set(load.sent.filter((s) => s.status !== 200).map((s) => `${s.status} ${s.code}`));
    expect([...kinds].filter((k) => k !== "503 STORE_UNAVAILABLE")).toEqual([]);
    expect(report.failed).toBeGreaterThan(0);
    expect(report.answeredDuringOutage).toBeGreaterThan(0);
    expect(report.slowestMs).toBeLessThan(MAX_REQUEST_MS);
    expect(report.readinessWent503).toBe(true);
  }

  it("a full disk: answers keep flowing, records spooled and replayed once room is freed", async () => {
    gw = await startChildGateway(configFile);
    const upstreamBefore = fake.requests.length;
    const load = startLoad([gw.baseURL], { clients: 20, keys: [KEY, OTHER], readyUrl: `${gw.url}/readyz` });
    await until("traffic", async () => (load.sent.filter((s) => s.answered).length >= 40 ? true : undefined));
    const from = performance.now();
    disk.fill();
    await until("the store to be marked down", async () => (load.ready.some((r) => r.status === 503 && r.at > from) ? true : undefined));
    await sleep(2000);
    disk.unfill();
    const to = performance.now();
    await until("readiness again", async () => (load.ready.some((r) => r.status === 200 && r.at > to) ? true : undefined));
    await sleep(300);
    await load.stop();
    expectHeld(load, from, to);
    const body = (await (await fetch(`${gw.url}/readyz`)).json()) as any;
    expect(body.checks.store.spool.records).toBe(0);
    await gw.stop();
    gw = undefined;
    const ids = await ledgerIds();
    const gaps = ledgerGaps(load.sent, ids);
    expect(gaps.lost).toEqual([]);
    expect(gaps.twice).toEqual([]);
    expect(ids.filter((id) => load.sent.some((s) => s.requestId === id))).toHaveLength(fake.requests.length - upstreamBefore);
  }, 90_000);

  it("a disk gone read-only: answers keep flowing; a new process replays the spool once the disk is repaired", async () => {
    gw = await startChildGateway(configFile);
    const upstreamBefore = fake.requests.length;
    const load = startLoad([gw.baseURL], { clients: 20, keys: [KEY, OTHER], readyUrl: `${gw.url}/readyz` });
    await until("traffic", async () => (load.sent.filter((s) => s.answered).length >= 40 ? true : undefined));
    const from = performance.now();
    disk.failReadOnly();
    await until("the store to be marked down", async () => (load.ready.some((r) => r.status === 503 && r.at > from) ? true : undefined));
    await sleep(2000);
    await load.stop();
    expectHeld(load, from, performance.now());
    const spooled = ((await (await fetch(`${gw.url}/readyz`)).json()) as any).checks.store.spool.records;
    expect(spooled).toBeGreaterThan(0);
    // The operator stops the replica (its records stay in the spool), repairs the disk, starts it again.
    await gw.stop();
    gw = undefined;
    disk.repair();
    gw = await startChildGateway(configFile);
    await until("the replay", async () => {
      const r = await fetch(`${gw!.url}/readyz`);
      return r.status === 200 && ((await r.json()) as any).checks.store.spool.records === 0 ? true : undefined;
    });
    const restarted = gw;
    await gw.stop(); // flushes its log
    gw = undefined;
    expect(restarted.output()).toContain("spool: adopted the records of a process that is gone");
    expect(restarted.output()).toMatch(/"records":\d+,"msg":"store: spooled ledger records replayed"/);
    const ids = await ledgerIds();
    const gaps = ledgerGaps(load.sent, ids);
    if (gaps.lost.length) console.log("LOST", load.sent.filter((s) => gaps.lost.includes(s.requestId)).map((s) => Math.round(s.end - from)).join(" "));
    expect(gaps.lost).toEqual([]);
    expect(gaps.twice).toEqual([]);
    expect(ids.filter((id) => load.sent.some((s) => s.requestId === id))).toHaveLength(fake.requests.length - upstreamBefore);
  }, 90_000);

  it("a damaged ledger page: the gateway refuses to start and says which file and what to do", async () => {
    // Overwrite the middle of the file (ledger pages; the header stays valid, so the file still opens).
    const size = statSync(dbPath).size;
    expect(size).toBeGreaterThan(64 * 1024);
    const fd = openSync(dbPath, "r+");
    writeSync(fd, Buffer.alloc(16 * 1024, 0x5a), 0, 16 * 1024, Math.floor(size / 2 / 4096) * 4096);
    closeSync(fd);
    // The damage is found by the quick check, or already when the schema is read (which pages the 16 KiB hit decides).
    const damaged = new RegExp(`the SQLite file ${dbPath.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is damaged \\((quick_check: |database disk image is malformed)[^]*Restore it from a backup`);
    await expect(startChildGateway(configFile)).rejects.toThrow(damaged);
  }, 60_000);
});
