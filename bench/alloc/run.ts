// CPU and allocation per request, by variant and by function (issue 11) — figures that hold up on a busy machine,
// where throughput ratios do not. Gateways run in this process in front of the lean fake upstream (client and
// upstream cost the same for every variant, so differences are the gateway's own):
// - main-thread CPU per request: on-CPU nanoseconds of this process's main thread (/proc/self/schedstat; time spent
//   waiting for a core is not counted), in interleaved rounds (each round runs every variant, in a random order);
//   work moved to other threads (the SQLite checkpointer) is not in it, by design: it no longer holds the event loop;
// - bytes allocated per request by function: V8's sampling heap profiler, collected objects included (GC time is
//   the largest difference between the full pipeline and `auth, router` in CPU profiles).
//   npx tsx bench/alloc/run.ts [--requests 400] [--rounds 20] [--stream on|off] [--top 25]
//     [--variant NAME=pipeline:a,b | NAME=full][@/path/to/other/checkout] ...   (default: base=pipeline:auth,router full=full)
//     [--alloc off]   (CPU only; e.g. under --cpu-prof, one variant at a time)
//     [--prompt-kb K]  a conversation of ~K KB before the question (default: one short message)
//     [--hold N]      instead: JS heap per open slow stream — per variant, N streams (one frame every 200 ms) held
//                     open at once, live heap after a full GC with them open minus before, / N (native memory such as
//                     sockets is not in it; bench:load --slow-streams measures RSS)
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { Session } from "node:inspector/promises";
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { PerformanceObserver, constants, performance } from "node:perf_hooks";
import { runInNewContext } from "node:vm";
import { Pool } from "undici";
import { parseArgs } from "node:util";
import YAML from "yaml";
import { startGateway, type RunningGateway } from "../../core/server.ts";
import { createLogger } from "../../core/log.ts";
import { createFakeUpstream } from "../load/upstream.ts";
import { BENCH_KEY, BENCH_MODEL } from "../load/config.ts";
import { slowStreamsConfig } from "../load/slow-streams.ts";
import { createPool, fetchText, requestBody, send, type Done, type LoadTarget } from "../load/client.ts";
import { sendWithHeaders } from "../load/slow-streams.ts";

const { values: opts } = parseArgs({
  options: {
    requests: { type: "string", default: "400" },
    stream: { type: "string", default: "on" },
    top: { type: "string", default: "25" },
    concurrency: { type: "string", default: "8" },
    variant: { type: "string", multiple: true },
    rounds: { type: "string", default: "20" },
    alloc: { type: "string", default: "on" },
    hold: { type: "string" },
    "prompt-kb": { type: "string", default: "0" },
  },
});
const REQUESTS = Number(opts.requests);
const STREAM = opts.stream !== "off";
const CONC = Number(opts.concurrency);

const HOLD = opts.hold === undefined ? undefined : Number(opts.hold);
// --hold: 60 s streams, so all N are still open when the heap is read (opening 2 000 can take tens of seconds).
const upstream = createFakeUpstream(HOLD ? { chunks: 300, chunkDelayMs: 200 } : { chunks: 50 });
const upPort = await new Promise<number>((r) => upstream.listen(0, "127.0.0.1", () => r((upstream.address() as AddressInfo).port)));
const dir = mkdtempSync(join(tmpdir(), "mg-bench-alloc-"));
const log = createLogger("silent" as never);

interface Variant { name: string; pipeline?: string[]; memory?: boolean; root?: string; gw?: RunningGateway; target?: LoadTarget; cpuNs: number; cpuRequests: number }
const variants: Variant[] = (opts.variant ?? ["base=pipeline:auth,router", "full=full"]).map((s) => {
  const eq = s.indexOf("=");
  const at = s.lastIndexOf("@/");
  const name = s.slice(0, eq);
  const spec = s.slice(eq + 1, at === -1 ? undefined : at);
  const root = at === -1 ? undefined : s.slice(at + 1);
  // NAME=full:memory (or pipeline:a,b:memory): the same on the memory store, to see what the SQLite writes cost.
  const memory = spec.endsWith(":memory");
  const what = memory ? spec.slice(0, -7) : spec;
  return { name, root, memory, cpuNs: 0, cpuRequests: 0, ...(what.startsWith("pipeline:") ? { pipeline: what.slice(9).split(",") } : {}) };
});
for (const v of variants) {
  // The slow-streams config: the soak key (allowlist, budget, rate limits that never trip), SQLite, no pipeline: key.
  const config = slowStreamsConfig(`http://127.0.0.1:${upPort}/v1`, join(dir, `${v.name}.db`), HOLD ?? CONC) as Record<string, any>;
  if (v.pipeline) config.pipeline = v.pipeline;
  if (v.memory) config.store = { kind: "memory" };
  const file = join(dir, `${v.name}.yaml`);
  writeFileSync(file, YAML.stringify(config));
  // Another checkout's gateway (before/after in one process): its own module graph, loaded from its files.
  const start: typeof startGateway = v.root ? (await import(join(v.root, "core/server.ts"))).startGateway : startGateway;
  v.gw = await start({ configFile: file, port: 0, host: "127.0.0.1", watch: false, logger: log });
  v.target = { name: v.name, origin: v.gw.url, path: "/api/v1/chat/completions", headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}` } };
}

const body = withHistory(requestBody(BENCH_MODEL, STREAM), Number(opts["prompt-kb"]));

/** The request with ~kb KB of earlier turns before its question: what a long chat sends on every turn. */
function withHistory(json: string, kb: number): string {
  if (!(kb > 0)) return json;
  const req = JSON.parse(json) as { messages: { role: string; content: string }[] };
  const turn = "Earlier turn of a long conversation, padded to a kilobyte. ".repeat(17).slice(0, 1000);
  const history = Array.from({ length: Math.round(kb) }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: turn }));
  return JSON.stringify({ ...req, messages: [...history, ...req.messages] });
}
async function drive(v: Variant, n: number): Promise<void> {
  const pool = createPool(v.target!.origin, CONC);
  let left = n;
  let failed = 0;
  await Promise.all(Array.from({ length: CONC }, async () => {
    while (left-- > 0) {
      const d = await new Promise<Done>((resolve) => send(pool, v.target!, body, STREAM, resolve));
      if (!d.ok) failed++;
    }
  }));
  await pool.close();
  if (failed) throw new Error(`${v.name}: ${failed} requests failed`);
}

interface Node { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: Node[] }
function bySite(root: Node): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (n: Node) => {
    const f = n.callFrame;
    const url = f.url.replace(/^.*\/node_modules\//, "").replace(/^.*?\/((core|plugins|providers|bench)\/)/, "$1").replace(/^file:\/\//, "");
    const k = `${f.functionName || "(anonymous)"} ${url}:${f.lineNumber + 1}`;
    out.set(k, (out.get(k) ?? 0) + n.selfSize);
    n.children.forEach(walk);
  };
  walk(root);
  return out;
}

/** On-CPU time of this process's main thread, ns (first field of /proc/self/schedstat). */
const mainThreadNs = () => Number(readFileSync("/proc/self/schedstat", "utf8").split(" ")[0]);

if (HOLD) {
  await holdStreams(HOLD);
  for (const v of variants) await v.gw!.close();
  upstream.close();
  process.exit(0);
}
for (const v of variants) await drive(v, 300); // warm-up: JIT, pools, SQLite page cache
const ROUNDS = Number(opts.rounds);
const perRound = Math.max(CONC, Math.round(REQUESTS / 4));
for (let r = 0; r < ROUNDS; r++) {
  for (const v of [...variants].sort(() => Math.random() - 0.5)) {
    const t = mainThreadNs();
    await drive(v, perRound);
    v.cpuNs += mainThreadNs() - t;
    v.cpuRequests += perRound;
  }
}
console.log(`main-thread CPU per ${STREAM ? "streaming (50 chunks)" : "JSON"} request (client and upstream included, the same for every variant), ${ROUNDS} interleaved rounds of ${perRound}, concurrency ${CONC}`);
const ref = variants[0]!;
for (const v of variants) {
  const us = v.cpuNs / v.cpuRequests / 1000;
  console.log(`  ${v.name.padEnd(12)} ${us.toFixed(1)} us${v === ref ? "" : `  (${(us - ref.cpuNs / ref.cpuRequests / 1000 >= 0 ? "+" : "")}${(us - ref.cpuNs / ref.cpuRequests / 1000).toFixed(1)} us vs ${ref.name})`}`);
}

if (opts.alloc === "off") {
  for (const v of variants) await v.gw!.close();
  upstream.close();
  process.exit(0);
}
const session = new Session();
session.connect();
const results = new Map<string, Map<string, number>>();
for (const v of variants) {
  await drive(v, 50);
  await session.post("HeapProfiler.startSampling", { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
  await drive(v, REQUESTS);
  const { profile } = (await session.post("HeapProfiler.stopSampling")) as unknown as { profile: { head: Node } };
  results.set(v.name, bySite(profile.head));
}
session.disconnect();

const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
console.log(`\nallocated per ${STREAM ? "streaming (50 chunks)" : "JSON"} request, ${REQUESTS} requests per variant, sampled every 1 KiB (client and upstream included, the same for every variant)`);
for (const v of variants) console.log(`  ${v.name.padEnd(12)} ${(total(results.get(v.name)!) / REQUESTS / 1024).toFixed(1)} KiB`);
const names = variants.map((v) => v.name);
const keys = new Set(names.flatMap((n) => [...results.get(n)!.keys()]));
const last = names[names.length - 1]!;
const rows = [...keys].map((k) => ({ k, v: names.map((n) => (results.get(n)!.get(k) ?? 0) / REQUESTS) }));
rows.sort((a, b) => b.v[names.length - 1]! - a.v[names.length - 1]!);
console.log(`\nbytes per request by allocating function, top ${opts.top} by ${last}`);
console.log(names.map((n) => n.padStart(10)).join("") + "  function");
for (const r of rows.slice(0, Number(opts.top))) console.log(r.v.map((x) => x.toFixed(0).padStart(10)).join("") + "  " + r.k);

for (const v of variants) await v.gw!.close();
upstream.close();

/** --hold N: live JS heap per open stream, per variant (one variant at a time, N streams open at once). */
async function holdStreams(n: number): Promise<void> {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const live = () => {
    gc();
    gc();
    return getHeapStatistics().used_heap_size;
  };
  console.log(`live JS heap per open stream (${n} open at once, one frame every 200 ms, full GC before each reading)`);
  for (const v of variants) {
    // Warm with JSON requests (a slow stream takes 20 s), as bench:load --slow-streams does.
    const warm = new Pool(v.target!.origin, { connections: 4 });
    for (let i = 0; i < 50; i++) {
      const r = await fetchText(warm, v.target!, requestBody(BENCH_MODEL, false));
      if (r.status !== 200) throw new Error(`${v.name}: warm-up HTTP ${r.status}`);
    }
    await warm.close();
    const before = live();
    const buffersBefore = process.memoryUsage().arrayBuffers;
    // Live objects only (no collected ones): what the open streams retain, by the function that allocated it.
    const session = new Session();
    session.connect();
    await session.post("HeapProfiler.startSampling", { samplingInterval: 256 } as never);
    const pool = new Pool(v.target!.origin, { connections: n, pipelining: 1, headersTimeout: 120_000, bodyTimeout: 60_000 });
    let open = 0;
    let ended = 0;
    let failed = 0;
    let allOpen!: () => void;
    const opened = new Promise<void>((r) => (allOpen = r));
    let allEnded!: () => void;
    const done = new Promise<void>((r) => (allEnded = r));
    // A stream that fails before its headers (e.g. a connection reset while thousands open) never opens: count it
    // so the wait for "all open" still ends (it used to hang there).
    let neverOpened = 0;
    for (let i = 0; i < n; i++) {
      let headers = false;
      sendWithHeaders(pool, v.target!, body, () => { headers = true; if (++open + neverOpened === n) allOpen(); }, (ok) => {
        if (!ok) failed++;
        if (!headers && ++neverOpened + open === n) allOpen();
        if (++ended === n) allEnded();
      });
    }
    await opened;
    await new Promise((r) => setTimeout(r, 1000));
    const during = live();
    // Buffers' bytes live outside the JS heap (a request body read from a socket, an upstream body undici keeps).
    const buffersDuring = process.memoryUsage().arrayBuffers;
    const endedEarly = ended;
    const { profile } = (await session.post("HeapProfiler.stopSampling")) as unknown as { profile: { head: Node } };
    session.disconnect();
    // While they run (nothing else opening): the heap's peak (the old generation's sawtooth: garbage promoted per
    // frame), the GCs, and this process's RSS peak (client and upstream included).
    let peakHeap = 0;
    let peakRss = 0;
    const gcs = { scavenge: 0, markCompact: 0 };
    const obs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
        if (kind === constants.NODE_PERFORMANCE_GC_MINOR) gcs.scavenge++;
        else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) gcs.markCompact++;
      }
    });
    obs.observe({ entryTypes: ["gc"] });
    const heapSampler = setInterval(() => {
      if (ended) return;
      const m = process.memoryUsage();
      if (m.heapUsed > peakHeap) peakHeap = m.heapUsed;
      if (m.rss > peakRss) peakRss = m.rss;
    }, 100);
    const runFrom = performance.now();
    await done;
    const runS = (performance.now() - runFrom) / 1000;
    clearInterval(heapSampler);
    obs.disconnect();
    await pool.close();
    console.log(`  ${v.name.padEnd(12)} ${(((during - before) / n) / 1024).toFixed(1)} KB per stream (live heap ${(before / 1048576).toFixed(1)} -> ${(during / 1048576).toFixed(1)} MB), + ${(((buffersDuring - buffersBefore) / n) / 1024).toFixed(1)} KB of Buffers outside the heap${failed ? `; ${failed} streams FAILED (${neverOpened} before their headers)` : ""}${endedEarly ? `; ${endedEarly} had already ended when the heap was read: figure too low` : ""}`);
    console.log(`  ${"".padEnd(12)} while running (${runS.toFixed(0)} s): heap used peak ${(peakHeap / 1048576).toFixed(1)} MB (${(((peakHeap - before) / n) / 1024).toFixed(1)} KB per stream), process RSS peak ${(peakRss / 1048576).toFixed(1)} MB; ${gcs.scavenge} scavenges, ${gcs.markCompact} mark-compacts`);
    const sites = [...bySite(profile.head)].sort((a, b) => b[1] - a[1]).slice(0, Number(opts.top));
    for (const [k, bytes] of sites) console.log(`      ${(bytes / n).toFixed(0).padStart(7)} B/stream  ${k}`);
  }
}
