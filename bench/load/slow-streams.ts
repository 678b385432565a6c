// `npm run bench:load -- --slow-streams N`: memory per open stream (issue 32: 10 000 slow streams through the full
// default pipeline in ≤ 400 MB RSS on one host, all completing; issue 11 allowed 600 MB). Opens N streams through the gateway — each upstream
// stream sends one frame every --chunk-delay-ms — holds them all open at once, samples the gateway's RSS from
// /proc/<pid>/status at baseline, while they are open (the peak) and after they ended, and checks every stream ended
// with `data: [DONE]`. See bench/README.md.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { tmpdir } from "node:os";
import { Redis } from "ioredis";
import { readFileSync, writeFileSync, readdirSync, mkdirSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { performance } from "node:perf_hooks";
import YAML from "yaml";
import { Pool } from "undici";
import { benchConfig, BENCH_KEY, BENCH_MODEL } from "./config.ts";
import { cpuMs, deadChildren, startChild, startGatewayBin, toolEntry, type Child } from "./procs.ts";
import { createPool, fetchText, requestBody, type LoadTarget } from "./client.ts";
import { pssMb as processPssMb, rssMb as processRssMb } from "../soak/sampler.ts";

export interface SlowStreamsOptions {
  streams: number;
  chunkDelayMs: number;
  chunks: number;
  dir: string;
  nodeArgs: string[];
  /** Also write heap snapshots (baseline, all open) into this directory; compare with bench/soak/heap-diff.ts. */
  heapSnapshots?: string;
  /** The issue's target: MB of RSS allowed for 10 000 streams (scaled linearly to N for the verdict's per-stream figure). */
  targetMb: number;
  targetStreams: number;
  /** Gateway processes behind one port (node:cluster). N > 1 runs on Redis (a redis-server this run starts), and
   * RSS is the sum of the primary, every worker and redis-server: each process then holds N / workers streams,
   * which is how 10 000 fit under a per-process open-file limit of 20 000. */
  workers?: number;
  /** Hold the streams through the bare proxy instead (bench/load/bare-proxy.ts, plain JavaScript): the memory a Node
   * proxy with no policy at all takes per open stream, the floor the gateway's figure compares with. */
  bare?: boolean;
}

/** Requests still waiting for response headers at once while opening (keeps the listen backlog from overflowing;
 * 200 opened only ~150 streams/s on the loaded 2-core machine, too slow to have 10 000 open at once). */
const OPENING_AT_ONCE = 500;

/** Full default pipeline (no `pipeline:`) on SQLite, a budget and limits that never trip, a pool big enough for N. */
export function slowStreamsConfig(upstream: string, dbPath: string, streams: number, redisUrl?: string): Record<string, unknown> {
  const base = benchConfig({ upstream }) as Record<string, any>;
  delete base.pipeline;
  // The bench's redis-server has no persistence: accepted here (the gateway refuses such a server otherwise).
  base.store = redisUrl ? { kind: "redis", url: redisUrl, prefix: "mg-slow:", require_persistence: false } : { kind: "sqlite", path: dbPath };
  // Opening thousands of streams saturates both cores, and a store call then takes longer than the default 300 ms:
  // the store is taken for unavailable and requests get 503 STORE_UNAVAILABLE (issue 27's behaviour, by design).
  // This run measures memory per open stream, so store calls may take up to a minute here (the most allowed).
  base.store.timeout_ms = 60_000;
  // The provider's undici Pool defaults to 128 connections per origin: with fewer than N the streams would queue.
  base.providers.fake.connections = streams + 100;
  const limits = { rpm: 10_000_000, tpm: 10_000_000_000 };
  base.projects.bench = {
    keys: [{ id: "bench", sha256: base.projects.bench.keys[0].sha256, rate_limits: limits }],
    allow_models: ["bench/*"],
    budget: { usd: "100000", period: "total" },
    rate_limits: limits,
    project_rate_limits: limits,
  };
  return base;
}

/** Open files allowed to this process (children inherit it); raised with prlimit when too low and we may. */
function ensureFileLimit(need: number): string {
  const read = () => {
    const m = /Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/.exec(readFileSync("/proc/self/limits", "utf8"));
    return m ? Number(m[1] === "unlimited" ? Infinity : m[1]) : NaN;
  };
  const before = read();
  if (!(before < need)) return `open-file limit ${before} (need ~${need})`;
  try {
    execFileSync("prlimit", ["--pid", String(process.pid), `--nofile=${need}:${need}`], { stdio: "ignore" });
  } catch {
    /* not permitted: reported below */
  }
  const after = read();
  return after >= need
    ? `open-file limit raised ${before} -> ${after} with prlimit (the gateway holds 2 sockets per stream)`
    : `WARNING: open-file limit ${after} < ~${need} needed (the gateway holds 2 sockets per stream: at most ~${Math.floor((after - 200) / 2)} streams fit); raise it: ulimit -n ${need} (as a user allowed to)`;
}

export async function runSlowStreams(o: SlowStreamsOptions): Promise<boolean> {
  const n = o.streams;
  const workers = o.workers ?? 1;
  const out = (s: string) => process.stdout.write(s);
  // A gateway process holds two sockets per stream it serves (client and upstream) plus its own files; the
  // generator and the upstream hold one per stream.
  out(`${ensureFileLimit(Math.max(n, 2 * Math.ceil(n / workers)) + 200)}\n`);
  const ports = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
  out(`ephemeral ports ${ports[0]}-${ports[1]} (${ports[1]! - ports[0]! + 1}); ${n} client + ${n} upstream connections on 127.0.0.1\n`);
  const streamS = ((o.chunks + 3) * o.chunkDelayMs) / 1000;
  out(`${n} streams, one upstream frame every ${o.chunkDelayMs} ms, ${o.chunks} chunks (~${streamS.toFixed(1)} s per stream)\n\n`);

  const upstream = await startChild("upstream", await toolEntry("upstream"), ["--chunks", String(o.chunks), "--chunk-delay-ms", String(o.chunkDelayMs)]);
  const redis = workers > 1 ? await startRedisServer() : undefined;
  if (redis) out(`${workers} gateway workers on Redis (redis-server pid ${redis.pid}); RSS below = primary + workers + redis-server\n`);
  const file = join(o.dir, "slow-streams.yaml");
  writeFileSync(file, YAML.stringify(slowStreamsConfig(`http://127.0.0.1:${upstream.port}/v1`, join(o.dir, "slow.db"), n, redis?.url)));
  const nodeArgs = [...o.nodeArgs];
  if (o.heapSnapshots) {
    mkdirSync(o.heapSnapshots, { recursive: true });
    nodeArgs.push("--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${o.heapSnapshots}`);
  }
  const gw = o.bare
    ? await startBare(`http://127.0.0.1:${upstream.port}`, n, nodeArgs)
    : // As users start it (bin/model-gateway.mjs start), logging as shipped: an access line per stream, to a file.
      await startGatewayBin("gateway", { config: file, nodeArgs, workers, logFile: join(o.dir, "gateway-stderr.log"), timeoutMs: 60_000 * workers });
  const pid = gw.proc.pid!;
  // Every process whose memory the streams cost: one gateway, or the primary, its workers and redis-server.
  const pids = [...gw.pids, ...(redis ? [redis.pid] : [])];
  const rssMb = () => pids.reduce((sum, p) => sum + processRssMb(p), 0);
  // Summed RSS counts pages the processes share (the node binary's code, libraries) once per process; summed PSS
  // counts them once in all. Reported beside RSS when there are several processes.
  const pssMb = () => pids.reduce((sum, p) => sum + processPssMb(p), 0);
  const several = pids.length > 1;
  const target: LoadTarget = {
    name: o.bare ? "bare-proxy" : "gateway", origin: `http://127.0.0.1:${gw.port}`, path: "/api/v1/chat/completions", pid,
    headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}` },
  };
  const body = requestBody(BENCH_MODEL, true);

  // Warm the process (JIT, SQLite statements, the pool) with non-streaming requests — a slow stream would take its
  // whole length — then measure the baseline. The streams themselves are checked one by one below.
  const check = createPool(target.origin, 4);
  const jsonBody = requestBody(BENCH_MODEL, false);
  for (let i = 0; i < 50; i++) {
    const r = await fetchText(check, target, jsonBody);
    if (r.status !== 200 || !JSON.parse(r.text).choices) throw new Error(`setup request failed: HTTP ${r.status} ${r.text.slice(0, 300)}`);
  }
  await check.close();
  await sleep(1000);
  const snapshot = async (label: string) => {
    if (!o.heapSnapshots) return;
    const had = new Set(readdirSync(o.heapSnapshots));
    process.kill(pid, "SIGUSR2");
    // Written synchronously by the gateway; wait until the file appears and stops growing.
    for (let i = 0; i < 600; i++) {
      await sleep(250);
      const added = readdirSync(o.heapSnapshots).filter((f) => !had.has(f) && f.endsWith(".heapsnapshot"));
      if (added.length) {
        const f = join(o.heapSnapshots, added[0]!);
        let size = -1;
        for (;;) {
          await sleep(500);
          const s = readFileSync(f).length;
          if (s === size && s > 0) break;
          size = s;
        }
        out(`heap snapshot (${label}): ${f}\n`);
        return;
      }
    }
  };
  await snapshot("baseline");
  const baseline = rssMb();
  const pssBaseline = several ? pssMb() : NaN;
  out(`baseline RSS ${baseline.toFixed(1)} MB${several ? `, PSS ${pssBaseline.toFixed(1)} MB` : ""}\n`);

  // Patient timeouts: while thousands of streams are open, a new connection can wait seconds to be accepted/answered.
  const pool = new Pool(target.origin, { connections: n, pipelining: 1, keepAliveTimeout: 60_000, connectTimeout: 120_000, headersTimeout: 120_000, bodyTimeout: 60_000 });
  let started = 0, opening = 0, open = 0, completed = 0, failed = 0, maxOpen = 0;
  let peakRss = baseline;
  let allOpenRss = NaN;
  let peakPss = pssBaseline;
  let allOpenPss = NaN;
  let allOpenAt = NaN;
  let heapAllOpen: Promise<string> = Promise.resolve("-");
  const failures = new Map<string, number>();
  const cpuAtStart = cpuMs(pids);
  const t0 = performance.now();
  let finished!: () => void;
  const allDone = new Promise<void>((r) => (finished = r));
  const sampler = setInterval(() => {
    const rss = rssMb();
    if (rss > peakRss) peakRss = rss;
    if (several) peakPss = Math.max(peakPss, pssMb());
  }, 250);

  // Count a stream as open once its response headers arrived; the next request leaves when one finished opening.
  const launch = () => {
    while (started < n && opening < OPENING_AT_ONCE) {
      started++;
      opening++;
      let headers = false;
      const onHeaders = () => {
        headers = true;
        opening--;
        open++;
        if (open > maxOpen) maxOpen = open;
        if (open === n && Number.isNaN(allOpenAt)) {
          allOpenAt = performance.now() - t0;
          allOpenRss = rssMb();
          heapAllOpen = heapOf(gw.metricsPort);
          if (allOpenRss > peakRss) peakRss = allOpenRss;
          if (several) peakPss = Math.max(peakPss, (allOpenPss = pssMb()));
        }
        launch();
      };
      sendWithHeaders(pool, target, body, onHeaders, (ok, status, error) => {
        if (!headers) {
          opening--;
          launch();
        } else open--;
        if (ok) completed++;
        else {
          failed++;
          const k = error ? `${headers ? "after" : "before"} headers: ${error}` : `HTTP ${status}${status === 200 ? " (stream did not end with [DONE])" : ""}`;
          failures.set(k, (failures.get(k) ?? 0) + 1);
        }
        if (completed + failed === n) finished();
      });
    }
  };
  launch();
  const progress = setInterval(() => out(`  t ${((performance.now() - t0) / 1000).toFixed(0).padStart(3)} s  open ${String(open).padStart(6)}  completed ${String(completed).padStart(6)}  failed ${failed}  RSS ${rssMb().toFixed(1)} MB\n`), 2000);
  // While all N are open: heap snapshot (if asked) once they are.
  const snapWhileOpen = (async () => {
    if (!o.heapSnapshots) return;
    while (Number.isNaN(allOpenAt) && completed + failed < n) await sleep(100);
    if (!Number.isNaN(allOpenAt)) await snapshot(`${n} streams open`);
  })();
  const limitMs = Math.max(120_000, streamS * 1000 * 4 + n * 10);
  const timedOut = await Promise.race([allDone.then(() => false), sleep(limitMs).then(() => true)]);
  await snapWhileOpen;
  const cpuUsed = cpuMs(pids) - cpuAtStart;
  clearInterval(progress);
  clearInterval(sampler);
  const elapsed = (performance.now() - t0) / 1000;
  await pool.close().catch(() => {});
  await sleep(2000);
  const after = rssMb();
  const perProcess = pids.map((p) => processRssMb(p).toFixed(1)).join(" + ");
  await redis?.stop();

  const perStreamKb = ((allOpenRss - baseline) * 1024) / n;
  // Not all open at once (some failed or ended first): per stream of the most that were open together.
  const peakPerStreamKb = ((peakRss - baseline) * 1024) / (Number.isNaN(allOpenAt) ? Math.max(1, maxOpen) : n);
  const projected = baseline + (peakPerStreamKb * o.targetStreams) / 1024;
  const ok = !timedOut && completed === n && !deadChildren().length;
  // A pass needs the streams open together: streams that end before the last ones open never cost their RSS at once.
  const meetsTarget = ok && !Number.isNaN(allOpenAt) && (n >= o.targetStreams ? peakRss <= o.targetMb : projected <= o.targetMb);
  const through = o.bare ? "the bare proxy (no policy, no store)" : `full default pipeline on ${redis ? `Redis, ${workers} workers` : "SQLite"}`;
  out(`\n== slow streams: ${n} concurrent, one frame every ${o.chunkDelayMs} ms, ${through}\n`);
  out(`all ${n} open         ${Number.isNaN(allOpenAt) ? `NO (at most ${maxOpen} open at once)` : `after ${(allOpenAt / 1000).toFixed(1)} s`}\n`);
  out(`completed           ${completed} / ${n} ended with data: [DONE]${failed ? `; ${failed} failed: ${[...failures].map(([k, c]) => `${k} x${c}`).join(", ")}` : ""}${timedOut ? `; ${n - completed - failed} still open after ${limitMs / 1000} s` : ""} (${elapsed.toFixed(1)} s)\n`);
  out(`RSS baseline        ${baseline.toFixed(1)} MB\n`);
  out(`RSS all open        ${Number.isNaN(allOpenRss) ? "-" : `${allOpenRss.toFixed(1)} MB`}\n`);
  out(`RSS peak            ${peakRss.toFixed(1)} MB (sampled every 250 ms)\n`);
  out(`RSS after           ${after.toFixed(1)} MB (2 s after the last stream ended)${pids.length > 1 ? `; per process ${perProcess} (${workers} workers: primary, workers, redis-server)` : ""}\n`);
  out(`V8 heap, all open   ${await heapAllOpen}\n`);
  out(`KB per stream       ${Number.isNaN(perStreamKb) ? "-" : perStreamKb.toFixed(1)} (all open - baseline) / N; ${peakPerStreamKb.toFixed(1)} (peak - baseline) / ${Number.isNaN(allOpenAt) ? `${maxOpen} (most open at once)` : "N"}\n`);
  // Every stream's frames (content chunks, the role and usage chunks, [DONE]) and its opening, on every core.
  const frames = completed * (o.chunks + 3);
  out(`CPU per frame       ${frames ? ((cpuUsed * 1000) / frames).toFixed(1) : "-"} us (${(cpuUsed / 1000).toFixed(1)} s of CPU over ${frames} frames relayed, all threads of ${several ? "every process" : "the process"}, opening the streams included)\n`);
  if (several) {
    const pssPerStreamKb = ((peakPss - pssBaseline) * 1024) / (Number.isNaN(allOpenAt) ? Math.max(1, maxOpen) : n);
    out(`PSS (summed)        baseline ${pssBaseline.toFixed(1)}, all open ${Number.isNaN(allOpenPss) ? "-" : allOpenPss.toFixed(1)}, peak ${peakPss.toFixed(1)} MB; ${pssPerStreamKb.toFixed(1)} KB per stream at the peak (pages the processes share counted once, not once per process)\n`);
  }
  if (n < o.targetStreams) out(`projected           ${projected.toFixed(0)} MB for ${o.targetStreams} streams (baseline + peak KB per stream x ${o.targetStreams})\n`);
  out(`verdict             ${meetsTarget ? "PASS" : "FAIL"}: target ${o.targetStreams} streams in <= ${o.targetMb} MB RSS summed over the host's gateway processes, all completing (issue 32)\n`);
  if (o.heapSnapshots) out(`compare: npx tsx bench/soak/heap-diff.ts <baseline>.heapsnapshot <open>.heapsnapshot 30\n`);
  return ok;
}

/**
 * The V8 heap as the gateway's /metrics reports it (prom-client's default metrics; summed over the workers when there
 * are several): committed and in use, in all and for the young and old generations — how much of the RSS is heap,
 * and how much of the heap is the young generation's semi-spaces rather than live objects.
 */
async function heapOf(metricsPort: number | undefined): Promise<string> {
  if (!metricsPort) return "- (no metrics listener)";
  try {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { signal: AbortSignal.timeout(5000) });
    return heapSummary(await res.text());
  } catch (err) {
    return `- (${String(err)})`;
  }
}

export function heapSummary(metrics: string): string {
  const value = (name: string, space?: string): number => {
    const label = space ? `{space="${space}"}` : "";
    const m = new RegExp(`^${name}${label.replace(/[{}]/g, "\\$&")} ([0-9.e+]+)$`, "m").exec(metrics);
    return m ? Number(m[1]) / 1048576 : NaN;
  };
  const mb = (x: number) => (Number.isNaN(x) ? "?" : x.toFixed(1));
  const used = (space: string) => value("nodejs_heap_space_size_used_bytes", space);
  const total = (space: string) => value("nodejs_heap_space_size_total_bytes", space);
  return `committed ${mb(value("nodejs_heap_size_total_bytes"))} MB (young ${mb(total("new"))}, old ${mb(total("old"))}), `
    + `in use ${mb(value("nodejs_heap_size_used_bytes"))} MB (young ${mb(used("new"))}, old ${mb(used("old"))})`;
}

/** client.send with a callback at the response headers (the moment a stream counts as open). */
export function sendWithHeaders(pool: Pool, target: LoadTarget, body: string, onHeaders: () => void, cb: (ok: boolean, status: number, error?: string) => void): void {
  let status = 0;
  let tail = "";
  let called = false;
  const DONE = "data: [DONE]\n\n";
  const finish = (ok: boolean, error?: string) => {
    if (called) return;
    called = true;
    cb(ok, status, error);
  };
  pool.dispatch(
    { origin: target.origin, path: target.path, method: "POST", headers: target.headers, body },
    {
      onRequestStart() {},
      onResponseStart(_c, statusCode) {
        status = statusCode;
        onHeaders();
      },
      onResponseData(_c, chunk) {
        tail = chunk.length >= DONE.length ? chunk.toString("latin1", chunk.length - DONE.length) : (tail + chunk.toString("latin1")).slice(-DONE.length);
      },
      onResponseEnd() {
        finish(status === 200 && tail === DONE);
      },
      onResponseError(_c, err) {
        finish(false, (err as NodeJS.ErrnoException).code ?? err.message);
      },
    },
  );
}

/** The bare proxy, bundled as the gateway is, with an upstream connection for each of the N streams. */
async function startBare(upstreamOrigin: string, streams: number, nodeArgs: string[]): Promise<Child> {
  return startChild("bare-proxy", await toolEntry("bare-proxy"), ["--upstream", upstreamOrigin, "--connections", String(streams + 100)], { nodeArgs });
}

/** A throwaway redis-server on a free loopback port (no persistence), stopped by its own pid. */
async function startRedisServer(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = 20_000 + Math.floor(Math.random() * 10_000);
  const dir = mkdtempSync(join(tmpdir(), "mg-slow-redis-"));
  const child: ChildProcess = spawn(process.env.REDIS_SERVER ?? "redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--maxclients", "10000"], { stdio: "ignore" });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on("error", () => {});
    try {
      await r.connect();
      await r.ping();
      r.disconnect();
      break;
    } catch (err) {
      r.disconnect();
      if (i > 50 || child.exitCode !== null) throw new Error(`redis-server did not start on ${port}: ${(err as Error).message}`);
      await sleep(100);
    }
  }
  return {
    url,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await exited;
    },
  };
}
