// Ledger write cost per request, SQLite against Postgres, in the same run (issue 28):
//   npx tsx bench/ledger/write.ts [records=20000] [concurrency=16] [rounds=2]
// Each round records N ledger records through the store as the meter does (`concurrency` in flight at once, like a
// busy gateway), alternating SQLite (store kind sqlite: one group-committed, fdatasync'd transaction per event-loop
// turn, rollups included), Redis alone (its stream ledger and rollup hashes, one script) and Redis + Postgres (store.ledger: postgres: the spend and settlement script in Redis,
// the record fsync'd to the replica's spool; a writer sends batches of 500 to Postgres in the background).
// Reported per record: what a request waits for (record() p50/p99), the gateway's main-thread CPU (/proc/self/
// schedstat) until everything is durable in its final store (for Postgres: until the spool is written), and wall
// time. Both servers are real and durable (redis-server with appendonly everysec; postgresql with fsync and
// synchronous_commit on), started here in temp dirs.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { SqliteStore } from "../../core/store/sqlite.ts";
import { createStore } from "../../core/store/index.ts";
import type { SplitLedgerStore } from "../../core/store/ledger-split.ts";
import type { Store } from "../../core/store/types.ts";
import type { LedgerRecord } from "../../core/contracts/ledger-reader.ts";
import { startRedis } from "../../test/helpers/redis.ts";
import { Redis } from "ioredis";
import { RedisStore } from "../../core/store/redis.ts";
import { startPostgres } from "../../test/helpers/postgres.ts";

const N = Number(process.argv[2] ?? 20_000);
const CONCURRENCY = Number(process.argv[3] ?? 16);
const ROUNDS = Number(process.argv[4] ?? 2);
const mainThreadNs = () => Number(readFileSync("/proc/self/schedstat", "utf8").split(" ")[0]);

let seq = 0;
const record = (i: number): LedgerRecord => ({
  generationId: `gen_${process.pid}_${++seq}`, requestId: `req_${seq}`, ts: Date.now(), keyId: `k${i % 40}`, project: `p${i % 10}`, endpoint: "chat",
  model: `m${i % 8}`, provider: "up", attempts: 1, inputTokens: 120, outputTokens: 350, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0,
  images: 0, videoSeconds: 0, searchUnits: 0, webSearches: 0, costUsd: "0.000822", costPico: 822_000_000n, latencyMs: 412.5, ttftMs: 95.2,
  status: 200, outcome: "ok", sandbox: false, estimated: false, attemptList: [{ model: `m${i % 8}`, provider: "up", status: 200, latencyMs: 410 }],
});

interface Result { name: string; waitP50: number; waitP99: number; cpuUs: number; wallUs: number; drainMs: number; redisUs?: number }

/** redis-server's own CPU so far (user + sys), µs. */
async function redisCpuUs(r: Redis): Promise<number> {
  const info = await r.info("cpu");
  const v = (k: string) => Number(new RegExp(`^${k}:([\\d.]+)`, "m").exec(info)?.[1] ?? 0);
  return (v("used_cpu_user") + v("used_cpu_sys")) * 1e6;
}

async function run(name: string, store: Store, settle: () => Promise<void>, redisCli?: Redis): Promise<Result> {
  const waits: number[] = [];
  const r0 = redisCli ? await redisCpuUs(redisCli) : 0;
  const c0 = mainThreadNs();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < N) {
      const r = record(next++);
      const t = performance.now();
      await store.record(r);
      waits.push(performance.now() - t);
    }
  }));
  const recorded = performance.now();
  await settle();
  const wall = performance.now() - t0;
  const cpu = mainThreadNs() - c0;
  waits.sort((a, b) => a - b);
  return {
    name, waitP50: waits[Math.floor(waits.length / 2)]!, waitP99: waits[Math.floor(waits.length * 0.99)]!, cpuUs: cpu / N / 1000,
    wallUs: (wall / N) * 1000, drainMs: performance.now() - recorded, ...(redisCli ? { redisUs: ((await redisCpuUs(redisCli)) - r0) / N } : {}),
  };
}

const redis = await startRedis();
const postgres = await startPostgres({ durable: true });
const redisCli = new Redis(redis.url);
const results: Result[] = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    const dir = mkdtempSync(join(tmpdir(), "mg-ledger-bench-"));
    const sqlite = new SqliteStore(join(dir, "g.db"));
    results.push(await run("sqlite", sqlite, async () => {}));
    await sqlite.close();

    const stream = await RedisStore.connect(redis.url, `s${round}:`);
    results.push(await run("redis (stream)", stream, async () => {}, redisCli));
    await stream.close();

    const split = (await createStore(
      { kind: "redis", url: redis.url, prefix: `b${round}:`, ledger: { kind: "postgres", url: await postgres.createDatabase(`bench${round}`) } },
      dir, undefined, { spoolDir: join(dir, "spool") },
    )) as SplitLedgerStore;
    results.push(await run("redis+postgres", split, () => split.ledgerStore.flush(60_000), redisCli));
    if (split.ledgerStore.pending) throw new Error(`${split.ledgerStore.pending} records still waiting for Postgres`);
    await split.close();
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  redisCli.disconnect();
  await redis.stop();
  await postgres.stop();
}

console.log(`${N} records per run, ${CONCURRENCY} in flight; per record:`);
console.log("store            waits p50   waits p99   gateway main-thread CPU   redis-server CPU   wall until all durable in the ledger store");
for (const r of results) {
  console.log(`${r.name.padEnd(16)} ${r.waitP50.toFixed(2).padStart(6)} ms  ${r.waitP99.toFixed(2).padStart(7)} ms  ${r.cpuUs.toFixed(1).padStart(18)} us  ${r.redisUs === undefined ? "".padStart(16) : `${r.redisUs.toFixed(1).padStart(13)} us`}  ${r.wallUs.toFixed(1).padStart(14)} us (the last ${r.drainMs.toFixed(0)} ms after the last record() returned)`);
}
