// Issue 27's measurement: a 5-second Redis outage under 20 concurrent clients. One gateway process (the full default
// pipeline on a Redis store with AOF; half the clients on a project with a budget, half on one with rate limits only),
// a fake upstream, and a real redis-server that is paused (SIGSTOP: open connection, no answers) or killed and
// restarted with its AOF (SIGKILL). Prints what failed (status, code, time to answer), how long the gateway took to
// answer and to report ready again after Redis came back, and ledger records lost (answered but not recorded).
//   npx tsx bench/store/outage.ts [stop|kill] [outage seconds = 5] [clients = 20] [timeout_ms = 300]
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import YAML from "yaml";
import { startFakeOpenAI } from "../../test/upstreams/openai.ts";
import { startRedis } from "../../test/helpers/redis.ts";
import { startChildGateway } from "../../test/helpers/child-gateway.ts";
import { KEY, OTHER, policyConfig } from "../../test/helpers/policy-config.ts";
import { ledgerGaps, outageReport, startLoad } from "../../test/helpers/outage-load.ts";
import { RedisStore } from "../../core/store/redis.ts";

const mode = process.argv[2] === "kill" ? "kill" : "stop";
const outageMs = Number(process.argv[3] ?? 5) * 1000;
const clients = Number(process.argv[4] ?? 20);
const timeoutMs = Number(process.argv[5] ?? 300);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const redis = await startRedis();
const fake = await startFakeOpenAI({ chunkDelayMs: 2 });
const dir = mkdtempSync(join(tmpdir(), "mg-bench-outage-"));
const configFile = join(dir, "gateway.yaml");
const prefix = "mg-outage:";
writeFileSync(configFile, YAML.stringify(policyConfig(fake.baseUrl, {
  store: { kind: "redis", url: redis.url, prefix, timeout_ms: timeoutMs },
  acme: { budget: { usd: "1000", period: "month" }, rate_limits: { rpm: 1_000_000, tpm: 1_000_000_000 } },
  other: { rate_limits: { rpm: 1_000_000, tpm: 1_000_000_000 } },
})));
const gw = await startChildGateway(configFile);
try {
  const load = startLoad([gw.baseURL], { clients, keys: [KEY, OTHER], readyUrl: `${gw.url}/readyz` });
  await sleep(3000);
  const from = performance.now();
  if (mode === "stop") redis.pause();
  else await redis.kill();
  await sleep(outageMs);
  if (mode === "stop") redis.resume();
  else await redis.restart({ aof: true });
  const to = performance.now();
  for (let i = 0; i < 200 && !load.ready.some((r) => r.status === 200 && r.at > to); i++) await sleep(50);
  await sleep(3000);
  await load.stop();
  for (let i = 0; i < 200; i++) {
    const body = (await (await fetch(`${gw.url}/readyz`)).json()) as any;
    if (body.checks.store.spool.records === 0) break;
    await sleep(50);
  }
  const store = await RedisStore.connect(redis.url, prefix);
  const ledger = await store.ledger({});
  await store.close();
  const report = outageReport(load, { from, to });
  const gaps = ledgerGaps(load.sent, ledger.map((e) => e.requestId));
  const upstream = fake.requests.length;
  process.stdout.write(`\n== Redis ${mode === "stop" ? "paused (SIGSTOP)" : "killed (SIGKILL), restarted with its AOF"} for ${outageMs / 1000} s, ${clients} clients, store.timeout_ms ${timeoutMs}\n`);
  process.stdout.write(`requests             ${report.requests} (${report.duringOutage} during the outage, ${report.answeredDuringOutage} of them answered)\n`);
  process.stdout.write(`failed               ${report.failed}: ${Object.entries(report.failedByStatus).map(([k, n]) => `${n} × ${k}`).join(", ") || "none"}\n`);
  process.stdout.write(`failed, time to answer  p50 ${report.failedMs.p50} ms, p99 ${report.failedMs.p99} ms, max ${report.failedMs.max} ms\n`);
  process.stdout.write(`slowest request during the outage  ${report.slowestMs} ms\n`);
  process.stdout.write(`after Redis was back: first answer ${report.recoverMs ?? "-"} ms, /readyz 200 again ${report.readyAgainMs ?? "-"} ms (503 during: ${report.readinessWent503})\n`);
  process.stdout.write(`ledger               ${ledger.length} records for ${upstream} upstream calls; answered but not recorded: ${gaps.lost.length}; recorded twice: ${gaps.twice.length}\n`);
} finally {
  await gw.stop();
  await fake.close();
  await redis.stop();
}
