// `npm run bench:soak [-- options]`: a long run of mixed traffic against the gateway as shipped (SQLite store, the
// full default pipeline, a live key with budget and rate limits) in a child process, in front of fake OpenAI
// upstreams (healthy, 5 % HTTP 500 with a fallback model, always 400). Samples the gateway's memory and event-loop
// delay every 10 s, and fails when RSS keeps growing, when a valid request got a wrong answer, or when a stream did
// not end. See bench/README.md "bench:soak".
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { createInterface } from "node:readline";
import YAML from "yaml";
import { Pool } from "undici";
import { benchFile, deadChildren, gatewayEntry, startChild, stopChildren, type Child } from "../load/procs.ts";
import { BENCH_KEY_SHA256 } from "../load/config.ts";
import { soakConfig } from "./config.ts";
import { exchange, type Exchange } from "./exchange.ts";
import { checkReplay, headersOf, KINDS, kindPicker, newIdemKey, pathOf, type Kind } from "./mix.ts";
import { metricsText, sample, sumBy, type Sample } from "./sampler.ts";
import { judgeHeap, judgeRss, median, MIN_JUDGED_MINUTES } from "./verdict.ts";

const HELP = `npm run bench:soak -- [options]

  --minutes M         length of the traffic (default 10)
  --rate R            requests/s, open loop (default 200)
  --max-in-flight N   bound on requests in flight; a request due while N are open is not sent ("shed") (default 256)
  --sample-s S        sampling interval, seconds (default 10)
  --fail-rate F       fraction of the flaky upstream's requests answered 500 (default 0.05)
  --chunks N          content chunks per upstream stream (default 50)
  --max-heap-per-req B  leak threshold: live heap (after a full GC) gained per request between the 2-minute
                      mark and the end, bytes (default 100; see bench/soak/verdict.ts)
  --max-slope MB      leak threshold, MB/min of RSS over the second half (default 4)
  --max-growth X      leak threshold, RSS at the end / RSS at the 2-minute mark (default 1.3)
  --heap-snapshots DIR  also write a heap snapshot at the mark and at the end (compare: bench/soak/heap-diff.ts)
  --leak-bytes N      make the gateway leak N bytes per request (checks that the criterion trips)
  --node-args "..."   extra node flags for the gateway process
  --json FILE         samples, counts and verdict as JSON
`;

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    rate: { type: "string", default: "200" },
    "max-in-flight": { type: "string", default: "256" },
    "sample-s": { type: "string", default: "10" },
    "fail-rate": { type: "string", default: "0.05" },
    chunks: { type: "string", default: "50" },
    "max-slope": { type: "string", default: "4" },
    "max-heap-per-req": { type: "string", default: "100" },
    "heap-snapshots": { type: "string" },
    "max-growth": { type: "string", default: "1.3" },
    "leak-bytes": { type: "string", default: "0" },
    "node-args": { type: "string", default: "" },
    json: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const num = (name: string, v: string, min: number, max: number) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} must be a number in [${min}, ${max}] (got ${v})`);
  return n;
};
const durationS = num("minutes", values.minutes, 0.1, 240) * 60;
const rate = num("rate", values.rate, 1, 5000);
const maxInFlight = num("max-in-flight", values["max-in-flight"], 1, 10_000);
const sampleS = num("sample-s", values["sample-s"], 1, 600);
const failRate = num("fail-rate", values["fail-rate"], 0, 1);
const maxSlope = num("max-slope", values["max-slope"], 0, 1e6);
const maxGrowth = num("max-growth", values["max-growth"], 1, 100);
const maxHeapPerReq = num("max-heap-per-req", values["max-heap-per-req"], 0, 1e9);
const leakBytes = num("leak-bytes", values["leak-bytes"], 0, 1e8);
/** Streams that have not ended this long after the traffic stopped count as hung (undici's body timeout is 30 s). */
const DRAIN_MS = 40_000;

interface Remembered { api: Kind["api"]; key: string; reqBody: string; stream: boolean; respBody: string }
interface Counts { sent: number; ok: number; aborted: number; bad: number; ms: number[] }
const newCounts = (): Counts => ({ sent: 0, ok: 0, aborted: 0, bad: 0, ms: [] });

const byKind = new Map<string, Counts>(KINDS.map((k) => [k.name, newCounts()]));
const reasons = new Map<string, { count: number; example: string }>();
let interval = { sent: 0, ok: 0, aborted: 0, bad: 0, shed: 0 };
let shedTotal = 0;
let inFlight = 0;
let samplingErrors = 0;
let sentTotal = 0;
const heap = { mark: NaN, end: NaN, sentAtMark: 0, requests: 0 };
const remembered: Remembered[] = [];

/** What is wrong with this answer to this kind, or undefined. */
function judge(kind: Kind, x: Exchange, replayOf?: Remembered): string | undefined {
  if (x.status !== kind.status) return x.status === 0 ? `no response: ${x.error}` : `HTTP ${x.status} (expected ${kind.status}): ${x.body.slice(0, 160)}`;
  if (x.aborted) return undefined;
  if (kind.abort) return "abort kind got no body to hang up on";
  if (!x.ended) return kind.stream ? `stream did not end: ${x.error}` : `body did not end: ${x.error}`;
  try {
    if (replayOf) return checkReplay(x, { stream: replayOf.stream, body: replayOf.respBody });
    if (kind.idem === "fresh" && x.headers["idempotent-replayed"]) return "a fresh idempotency key was answered as a replay";
    return kind.check?.(x);
  } catch (err) {
    return `unparseable body (${(err as Error).message}): ${x.body.slice(0, 160)}`;
  }
}

function fire(pool: Pool, kind: Kind, onDone?: (bad: string | undefined) => void): void {
  let replayOf: Remembered | undefined;
  let api = kind.api;
  let body: string;
  let stream = kind.stream;
  let key: string | undefined;
  if (kind.idem === "replay" && remembered.length) {
    replayOf = remembered[Math.floor(Math.random() * remembered.length)]!;
    ({ api, stream, key } = replayOf);
    body = replayOf.reqBody;
  } else {
    body = kind.body();
    if (kind.idem) key = newIdemKey();
  }
  const c = byKind.get(kind.name)!;
  c.sent++;
  sentTotal++;
  interval.sent++;
  inFlight++;
  exchange(pool, pathOf(api), headersOf(api, key), body, stream, !!kind.abort, (x) => {
    inFlight--;
    const bad = judge(kind, x, replayOf);
    if (bad) {
      c.bad++;
      interval.bad++;
      const r = `${kind.name}: ${bad.replace(/\d{3,}/g, "N").slice(0, 100)}`;
      const e = reasons.get(r) ?? { count: 0, example: `${bad} [x-request-id ${x.headers["x-request-id"] ?? "-"}]` };
      e.count++;
      reasons.set(r, e);
    } else if (x.aborted) {
      c.aborted++;
      interval.aborted++;
    } else {
      c.ok++;
      interval.ok++;
      c.ms.push(x.ms);
      if (kind.idem === "fresh" || (kind.idem === "replay" && !replayOf)) {
        remembered.push({ api, key: key!, reqBody: body, stream, respBody: x.body });
        if (remembered.length > 256) remembered.shift();
      }
    }
    onDone?.(bad);
  });
}

/** One request of every kind, one after another: the setup works before the clock starts. */
async function probe(pool: Pool, label: string): Promise<void> {
  for (const kind of [...KINDS.filter((k) => k.idem !== "replay"), ...KINDS.filter((k) => k.idem === "replay")]) {
    const bad = await new Promise<string | undefined>((resolve) => fire(pool, kind, resolve));
    if (bad) throw new Error(`${label}: ${kind.name}: ${bad}`);
  }
}

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "-");
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "-");
const pad = (s: string | number, w: number) => String(s).padStart(w);
const HEAD = `${pad("t s", 5)} ${pad("rss MB", 7)} ${pad("heap", 6)} ${pad("heapTot", 7)} ${pad("ext", 5)} ${pad("fds", 4)} ${pad("handles", 7)} ${pad("lag p50", 7)} ${pad("p99", 6)} ${pad("max", 6)} | ${pad("req/s", 6)} ${pad("ok", 6)} ${pad("hungup", 6)} ${pad("bad", 4)} ${pad("shed", 5)} ${pad("open", 4)} | load1`;
const row = (s: Sample, iv: typeof interval, secs: number) =>
  `${pad(s.t, 5)} ${pad(f1(s.rssMb), 7)} ${pad(f1(s.heapUsedMb), 6)} ${pad(f1(s.heapTotalMb), 7)} ${pad(f1(s.externalMb), 5)} ${pad(s.fds, 4)} ${pad(s.activeHandles, 7)} ${pad(f2(s.lagP50), 7)} ${pad(f2(s.lagP99), 6)} ${pad(f1(s.lagMax), 6)} | ${pad(Math.round(iv.sent / secs), 6)} ${pad(iv.ok, 6)} ${pad(iv.aborted, 6)} ${pad(iv.bad, 4)} ${pad(iv.shed, 5)} ${pad(inFlight, 4)} | ${loadavg()[0]!.toFixed(2)}`;

function pct(xs: number[], q: number): number {
  if (!xs.length) return NaN;
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "mg-soak-"));
  const chunks = values.chunks;
  process.stdout.write(
    `model-gateway soak run — node ${process.version}, ${cpus().length} cpus, loadavg ${loadavg().map((l) => l.toFixed(2)).join(" ")}\n` +
      `${durationS / 60} min at ${rate} req/s open loop (at most ${maxInFlight} in flight), sample every ${sampleS} s; ${chunks} chunks/stream; ` +
      `flaky upstream fails ${failRate * 100} %${leakBytes ? `; INJECTED LEAK ${leakBytes} bytes/request` : ""}\n` +
      `mix per 100: ${KINDS.map((k) => `${k.name} ${k.weight}`).join(", ")}\n\n`,
  );
  try {
    const up = ["--chunks", chunks];
    const upstream = await startChild("upstream", benchFile("./upstream.ts"), up);
    const flaky = await startChild("flaky-upstream", benchFile("./upstream.ts"), [...up, "--fail-rate", String(failRate), "--fail-status", "500"]);
    const bad = await startChild("bad-upstream", benchFile("./upstream.ts"), [...up, "--fail-rate", "1", "--fail-status", "400"]);
    const url = (c: Child) => `http://127.0.0.1:${c.port}/v1`;
    const configFile = join(dir, "gateway.yaml");
    writeFileSync(configFile, YAML.stringify(soakConfig({ upstream: url(upstream), flakyUpstream: url(flaky), badUpstream: url(bad), dbPath: join(dir, "gateway.db") })));
    const nodeArgs = values["node-args"].split(/\s+/).filter(Boolean);
    if (leakBytes) nodeArgs.push("--import", fileURLToPath(new URL("./leak.mjs", import.meta.url)));
    if (values["heap-snapshots"]) mkdirSync(values["heap-snapshots"], { recursive: true });
    nodeArgs.push("--expose-gc", "--import", fileURLToPath(new URL("./gc-probe.mjs", import.meta.url)));
    const gw = await startChild("gateway", await gatewayEntry(), ["--config", configFile], {
      nodeArgs, env: { MG_SOAK_LEAK_BYTES: String(leakBytes), MG_BENCH_KEY_SHA256: BENCH_KEY_SHA256, MG_SOAK_SNAPSHOT_DIR: values["heap-snapshots"] ? resolve(values["heap-snapshots"]) : "" },
    });
    const pid = gw.proc.pid!;
    // Live heap after a full GC, on demand (bench/soak/gc-probe.mjs answers SIGUSR2 with a GC line).
    const gcWaiters: Array<(bytes: number) => void> = [];
    createInterface({ input: gw.proc.stdout! }).on("line", (line) => {
      if (line.startsWith("GC ")) gcWaiters.shift()?.(JSON.parse(line.slice(3)).heapUsed);
    });
    const liveHeap = () => new Promise<number>((resolve) => {
      const t = setTimeout(() => resolve(NaN), 60_000);
      gcWaiters.push((b) => { clearTimeout(t); resolve(b); });
      process.kill(pid, "SIGUSR2");
    });
    const origin = `http://127.0.0.1:${gw.port}`;
    const pool = new Pool(origin, { connections: 128, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
    const metricsPool = new Pool(`http://127.0.0.1:${gw.metricsPort}`, { connections: 1 });

    await probe(pool, "setup check");
    const samples: Sample[] = [await sample(metricsPool, pid, 0)];
    process.stdout.write(`${HEAD}\n${row(samples[0]!, interval, 1)}\n`);
    interval = { sent: 0, ok: 0, aborted: 0, bad: 0, shed: 0 };

    // Open loop: each timer tick sends every request that is due, whatever the gateway is doing.
    const pick = kindPicker();
    const t0 = performance.now();
    const total = Math.round(durationS * rate);
    let next = 0;
    // Live heap at the warm-up mark, and the requests sent so far (the end is measured after the drain).
    const markS = Math.min(120, 0.2 * durationS);
    const heapAtMark = sleep(markS * 1000).then(async () => {
      const sentBefore = sentTotal;
      heap.mark = await liveHeap();
      heap.sentAtMark = sentBefore;
    });
    // Sampling beside the traffic, on its own timer: at sampleS, 2 x sampleS, ... up to the end of the traffic.
    const sampler = (async () => {
      for (let k = 1; k * sampleS <= durationS + 1e-9; k++) {
        await sleep(Math.max(0, t0 + k * sampleS * 1000 - performance.now()));
        const secs = (performance.now() - t0) / 1000 - (samples.at(-1)!.t);
        try {
          const s = await sample(metricsPool, pid, Math.round(k * sampleS));
          samples.push(s);
          process.stdout.write(`${row(s, interval, secs)}\n`);
        } catch (err) {
          process.stdout.write(`${pad(Math.round(k * sampleS), 5)} sample failed: ${(err as Error).message}\n`);
          samplingErrors++;
        }
        interval = { sent: 0, ok: 0, aborted: 0, bad: 0, shed: 0 };
      }
    })();
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now();
        while (next < total && t0 + (next * 1000) / rate <= now) {
          const n = next++;
          if (inFlight >= maxInFlight) {
            interval.shed++;
            shedTotal++;
            continue;
          }
          fire(pool, pick(n));
        }
        if (next < total) setTimeout(tick, Math.max(0, t0 + (next * 1000) / rate - performance.now()));
        else resolve();
      };
      setTimeout(tick, 1);
    });
    await sampler;
    await heapAtMark;
    const drainEnd = performance.now() + DRAIN_MS;
    while (inFlight > 0 && performance.now() < drainEnd) await sleep(20);
    const hung = inFlight;
    heap.end = await liveHeap();
    heap.requests = sentTotal - heap.sentAtMark;
    const after = await sample(metricsPool, pid, Math.round((performance.now() - t0) / 1000));
    process.stdout.write(`after the drain (${hung} still open):\n${row(after, interval, 1)}\n\n`);

    // The same process still answers every kind correctly.
    let finalCheck = "ok";
    try {
      await probe(pool, "final check");
    } catch (err) {
      finalCheck = (err as Error).message;
    }
    // The gateway's own view of the run: what reached each upstream, and what it answered.
    const text = await metricsText(metricsPool);
    const fmt = (m: Map<string, number>) => [...m].sort().map(([k, n]) => `    ${pad(n, 8)}  ${k}`).join("\n");
    process.stdout.write(`== the gateway's /metrics after the run\n  upstream attempts (gateway_upstream_duration_seconds_count):\n${fmt(sumBy(text, "gateway_upstream_duration_seconds_count", ["provider", "outcome"]))}\n`);
    process.stdout.write(`  responses (gateway_requests_total):\n${fmt(sumBy(text, "gateway_requests_total", ["endpoint", "code"]))}\n\n`);
    await pool.close();
    await metricsPool.close();
    return report(samples, hung, finalCheck);
  } finally {
    await stopChildren();
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(samples: Sample[], hung: number, finalCheck: string): number {
  const out = process.stdout;
  const rss = samples.map((s) => ({ t: s.t, v: s.rssMb }));
  const at = (t: number) => samples.reduce((b, s) => (Math.abs(s.t - t) < Math.abs(b.t - t) ? s : b), samples[0]!);
  const marks = [60, 300, 600, durationS].filter((t, i, a) => t <= durationS && a.indexOf(t) === i);
  out.write(`== memory (RSS from /proc/<pid>/status, heap from /metrics)\n`);
  for (const t of marks) {
    const s = at(t);
    out.write(`  at ${pad(s.t, 4)} s: RSS ${f1(s.rssMb)} MB, heap used ${f1(s.heapUsedMb)} / ${f1(s.heapTotalMb)} MB, external ${f1(s.externalMb)} MB, fds ${s.fds}, handles ${s.activeHandles}\n`);
  }
  const v = judgeRss(rss.filter((p) => p.t > 0), durationS, maxSlope, maxGrowth);
  out.write(
    `  RSS slope over the second half ${f2(v.slope)} MB/min (last quarter ${f2(v.lastQuarterSlope)}; limit ${maxSlope}); ` +
      `end ${f1(v.atEnd)} MB = ${f2(v.growth)} x RSS at ${v.markS} s (${f1(v.atMark)} MB; limit ${maxGrowth})` +
      `${v.judged ? "" : ` — not judged: runs shorter than ${MIN_JUDGED_MINUTES} min are still warming up`}\n`,
  );
  const h = judgeHeap(heap.mark, heap.end, heap.requests, durationS, maxHeapPerReq);
  out.write(
    `  live heap after a full GC: ${f1(heap.mark / 1048576)} MB at ${v.markS} s, ${f1(heap.end / 1048576)} MB at the end, ` +
      `${heap.requests} requests in between: ${f1(h.perRequest)} bytes kept per request (limit ${maxHeapPerReq})\n\n`,
  );

  const live = samples.filter((s) => s.t > 0);
  out.write(`== event-loop delay per ${sampleS} s interval (ms): p50 median ${f2(median(live.map((s) => s.lagP50)))}, max ${f2(Math.max(...live.map((s) => s.lagP50)))}; ` +
    `p99 median ${f2(median(live.map((s) => s.lagP99)))}, max ${f2(Math.max(...live.map((s) => s.lagP99)))}; worst single delay ${f1(Math.max(...live.map((s) => s.lagMax)))}\n\n`);

  out.write(`== requests by kind (latency ms to the last byte of answered requests)\n`);
  out.write(`${"kind".padEnd(18)} ${pad("sent", 7)} ${pad("ok", 7)} ${pad("hung up", 7)} ${pad("bad", 5)} ${pad("p50", 7)} ${pad("p99", 7)}\n`);
  const tot = newCounts();
  for (const k of KINDS) {
    const c = byKind.get(k.name)!;
    tot.sent += c.sent; tot.ok += c.ok; tot.aborted += c.aborted; tot.bad += c.bad;
    out.write(`${k.name.padEnd(18)} ${pad(c.sent, 7)} ${pad(c.ok, 7)} ${pad(c.aborted, 7)} ${pad(c.bad, 5)} ${pad(f2(pct(c.ms, 0.5)), 7)} ${pad(f2(pct(c.ms, 0.99)), 7)}\n`);
  }
  out.write(`${"total".padEnd(18)} ${pad(tot.sent, 7)} ${pad(tot.ok, 7)} ${pad(tot.aborted, 7)} ${pad(tot.bad, 5)}   (shed by the generator: ${shedTotal})\n`);
  out.write(`   (error kinds count as ok when they got their exact status and envelope; probes before and after included)\n\n`);

  const failures = [...h.failures, ...v.failures];
  if (tot.bad) {
    failures.push(`${tot.bad} requests got a wrong answer`);
    out.write(`== wrong answers\n`);
    for (const [r, e] of [...reasons].sort((a, b) => b[1].count - a[1].count)) out.write(`  ${pad(e.count, 6)}  ${r}\n          e.g. ${e.example}\n`);
    out.write("\n");
  }
  if (hung) failures.push(`${hung} requests still open ${DRAIN_MS / 1000} s after the traffic stopped`);
  if (finalCheck !== "ok") failures.push(finalCheck);
  if (samplingErrors) failures.push(`${samplingErrors} samples failed (/metrics did not answer)`);
  const dead = deadChildren();
  if (dead.length) failures.push(`processes died: ${dead.join(", ")}`);
  if (values.json) writeFileSync(values.json, JSON.stringify({ options: values, samples, heap, byKind: Object.fromEntries([...byKind].map(([k, c]) => [k, { ...c, ms: undefined, p50: pct(c.ms, 0.5), p99: pct(c.ms, 0.99) }])), reasons: Object.fromEntries(reasons), shed: shedTotal, hung, verdict: v, failures }, null, 2));
  out.write(failures.length ? `FAIL\n${failures.map((f) => `  - ${f}`).join("\n")}\n` : `PASS (loadavg now ${loadavg().map((l) => l.toFixed(2)).join(" ")})\n`);
  return failures.length ? 1 : 0;
}

try {
  process.exitCode = await main();
} catch (err) {
  process.stderr.write(`bench:soak failed: ${(err as Error).stack ?? err}\n`);
  process.exitCode = 1;
}
