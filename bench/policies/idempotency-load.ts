// The price of idempotency keys, which the load harness cannot send (its headers are fixed per target): one gateway
// process on bench/policies/full.yaml (SQLite), closed loop of 50 connections, requests without a key, with a fresh
// ULID key each (a claim + a durable record per request), and replays of one key. Reports req/s and the gateway's
// CPU ms per request (from /proc), interleaved three times (the first round warms the JIT). Run: npx tsx bench/policies/idempotency-load.ts [seconds]
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { Pool } from "undici";
import { ulid } from "ulid";
import { startFakeOpenAI } from "../../test/upstreams/openai.ts";
import { startChildGateway } from "../../test/helpers/child-gateway.ts";
import { BENCH_KEY, BENCH_KEY_SHA256, BENCH_MODEL } from "../load/config.ts";

const seconds = Number(process.argv[2] ?? 5);
const CONNECTIONS = 50;
const body = JSON.stringify({ model: BENCH_MODEL, messages: [{ role: "user", content: "Say hello" }], max_tokens: 16 });

function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, in clock ticks of 10 ms
}

async function phase(pool: Pool, pid: number, key: () => string | undefined) {
  const headers = (): Record<string, string> => {
    const k = key();
    return { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}`, ...(k ? { "idempotency-key": k } : {}) };
  };
  const one = async () => {
    const r = await pool.request({ path: "/api/v1/chat/completions", method: "POST", headers: headers(), body });
    await r.body.text();
    return r.statusCode;
  };
  const warmEnd = performance.now() + 1000;
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => { while (performance.now() < warmEnd) await one(); }));
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let n = 0, errors = 0;
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (performance.now() < end) {
      if ((await one()) !== 200) errors++;
      n++;
    }
  }));
  const elapsed = (performance.now() - t0) / 1000;
  return { rps: Math.round(n / elapsed), cpuPerReq: (cpuMs(pid) - cpu0) / n, errors };
}

const fake = await startFakeOpenAI();
const gw = await startChildGateway(fileURLToPath(new URL("./full.yaml", import.meta.url)), {
  MG_BENCH_UPSTREAM: fake.baseUrl, MG_BENCH_KEY_SHA256: BENCH_KEY_SHA256, MG_BENCH_DB: `/tmp/mg-bench-idem-${process.pid}.db`,
});
const pool = new Pool(gw.url, { connections: CONNECTIONS });
const fixed = ulid();
const modes: [string, () => string | undefined][] = [["no key", () => undefined], ["fresh key", () => ulid()], ["replay", () => fixed]];
try {
  console.log(`gateway pid ${gw.proc.pid}, ${CONNECTIONS} connections, ${seconds}s per phase`);
  for (let round = 1; round <= 3; round++) {
    for (const [name, key] of modes) {
      const r = await phase(pool, gw.proc.pid!, key);
      console.log(`${name.padEnd(10)} round ${round}: ${String(r.rps).padStart(5)} req/s  ${r.cpuPerReq.toFixed(3)} cpu ms/req  errors ${r.errors}`);
    }
  }
} finally {
  await pool.close();
  await gw.stop();
  await fake.close();
}
