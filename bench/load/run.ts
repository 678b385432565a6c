// `npm run bench:load [-- options]`: the fake upstream, a bare Node proxy and the gateway as separate processes on
// loopback, driven from this process (the load generator) open-loop and closed-loop. See bench/README.md.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir, cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import YAML from "yaml";
import { benchConfig, BENCH_ADMIN_KEY, BENCH_ADMIN_SHA256, BENCH_KEY, BENCH_KEY_SHA256, BENCH_MODEL, BENCH_FLAKY_MODEL } from "./config.ts";
import { openConsole, type OpenConsole } from "./console-page.ts";
import { UPSTREAM_KEY } from "./upstream.ts";
import { cpuMs, deadChildren, startChild, startGatewayBin, stopChildren, syscalls, toolEntry } from "./procs.ts";
import { shippedBenchConfig, SHIPPED_MODEL } from "./shipped.ts";
import { createPool, fetchText, requestBody, type LoadTarget } from "./client.ts";
import { closedLoop, openLoop, type Result } from "./loops.ts";
import { groupTable, pairedRatioTable, verdicts, verdictTable } from "./report.ts";
import { runSlowStreams } from "./slow-streams.ts";
import { shuffled } from "../lib.ts";

const HELP = `npm run bench:load -- [options]

  --duration S        measured seconds per phase (default 6)
  --warmup S          unmeasured seconds before each phase (default 1.5)
  --rate R            open-loop requests/s (default 500)
  --concurrency N     closed-loop connections (default 50)
  --modes LIST        open,closed (default both)
  --stream MODE       on | off | both (default both)
  --targets LIST      direct,bare,gateway (default all three; "gateway" = every --gateway variant)
  --gateway NAME=SPEC gateway variant, repeatable. SPEC is \`shipped\` (the repository's gateway.yaml: SQLite,
                      full default pipeline, access log on, a live key with budget and rate limits; requests
                      ${SHIPPED_MODEL}; shipped:a.b=v,c=w changes settings, e.g. shipped:store.fsync=false),
                      a gateway.yaml path, or pipeline:a,b,c (generated config with that pipeline, logging as
                      shipped; pipeline:default = the full default pipeline), optionally followed by
                      @/path/to/checkout to run another checkout's code (before/after comparisons in one run).
                      Every variant is started as users start it, \`node bin/model-gateway.mjs start --config
                      FILE\`, its stderr (log) to a file. Default: gateway=shipped
  --workers LIST      gateway processes behind one port (node:cluster, as \`model-gateway start --workers\`): N for
                      every variant, or NAME=N,NAME=N per variant (default 1). N > 1 needs a redis store config;
                      the CPU figures then add up the primary and all its workers
  --model ID          public model to request (default ${BENCH_MODEL}, ${SHIPPED_MODEL} on \`shipped\` variants;
                      ${BENCH_FLAKY_MODEL} with --flaky-rate)
  --flaky-rate F      also start a second upstream failing fraction F of its requests (HTTP --flaky-status,
                      default 500); generated configs then serve ${BENCH_FLAKY_MODEL} flaky-first, healthy second
  --abort-rate F      the client hangs up after the first body bytes on fraction F of requests (disconnect
                      robustness under load; those are reported as "hung up", not errors)
  --api LIST          chat,messages (default chat). "messages" adds, for every gateway variant, a target that
                      posts the Messages API (translated to the chat upstream; stream-transcoder is added to
                      pipeline: specs that lack it), so chat vs translated messages is compared in one run
  --chunks N          content chunks per upstream stream (default 50)
  --chunk-delay-ms MS delay between upstream stream frames (default 0)
  --console NAME=open|off  the operator console on a --gateway variant (repeatable): open = a headless Chromium
                      (Debian's chromium) signed in to it for the whole run, one tab on the overview and one on
                      the live request tail, both polling; off = console.enabled: false in its generated config (no
                      console, no traffic sampler). Default: on (loopback), nobody looking. Custom files need the
                      admin key: admin_keys: [{ id: bench, sha256: \${MG_BENCH_ADMIN_SHA256}, scope: read }]
  --node-args "..."   extra node flags for the gateway processes, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
  --node-args-for NAME="..."  extra node flags for one --gateway variant only (repeatable), e.g. to compare
                      V8 heap settings in one run: --node-args-for big="--max-semi-space-size=32"
  --repeat N          run the whole matrix N times (interleaved, targets in a fresh random order each round) and
                      judge on the median of each figure; closed loops also get each target's req/s against every
                      other taken within a round, median over the rounds (less of the machine's drift)
  --together          closed loops load every target at the same time (--concurrency connections each), so all
                      are measured over the same seconds of the machine: CPU per request compared between
                      gateway variants (before/after) holds still on a busy machine where one-after-another
                      rounds drift; throughput is then each target's share of a saturated machine
  --json FILE         also write every result as JSON
  --slow-streams N    instead of the phases: hold N streams open at once through the full default pipeline on
                      SQLite (one upstream frame every --chunk-delay-ms, default 200; --chunks default 300: 60 s) and
                      report the gateway's RSS per stream and whether all N completed (issue 32: 10 000 in <= 400 MB on one host);
                      with --workers N > 1 on Redis (a redis-server the run starts), RSS summed over every process;
                      with --targets bare, through the bare proxy instead: the floor a Node proxy with no policy sets
  --heap-snapshots DIR  with --slow-streams: heap snapshots of the gateway at baseline and with all N open
Custom gateway.yaml files can use \${MG_BENCH_UPSTREAM}, \${MG_BENCH_FLAKY_UPSTREAM}, \${MG_BENCH_KEY_SHA256} and \${MG_BENCH_ADMIN_SHA256}.
`;

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "6" },
    warmup: { type: "string", default: "1.5" },
    rate: { type: "string", default: "500" },
    concurrency: { type: "string", default: "50" },
    modes: { type: "string", default: "open,closed" },
    stream: { type: "string", default: "both" },
    targets: { type: "string" },
    gateway: { type: "string", multiple: true },
    model: { type: "string" },
    "flaky-rate": { type: "string" },
    "flaky-status": { type: "string", default: "500" },
    "abort-rate": { type: "string" },
    chunks: { type: "string" },
    api: { type: "string", default: "chat" },
    "chunk-delay-ms": { type: "string", default: "0" },
    "node-args": { type: "string", default: "" },
    "node-args-for": { type: "string", multiple: true },
    workers: { type: "string", default: "1" },
    console: { type: "string", multiple: true },
    json: { type: "string" },
    repeat: { type: "string", default: "1" },
    "slow-streams": { type: "string" },
    "heap-snapshots": { type: "string" },
    together: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

const slowStreams = values["slow-streams"];
// --slow-streams shapes the upstream differently: slow frames, long enough for every stream to be open at once.
values.chunks ??= slowStreams !== undefined ? "300" : "50";
if (slowStreams !== undefined && values["chunk-delay-ms"] === "0") values["chunk-delay-ms"] = "200";

const num = (name: string, v: string, min: number, max: number) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} must be a number in [${min}, ${max}] (got ${v})`);
  return n;
};
const durationMs = num("duration", values.duration, 0.5, 120) * 1000;
const warmupMs = num("warmup", values.warmup, 0, 60) * 1000;
const rate = num("rate", values.rate, 1, 20_000);
const concurrency = Math.round(num("concurrency", values.concurrency, 1, 1024));
const modes = values.modes.split(",").map((s) => s.trim()) as Array<"open" | "closed">;
const streams = values.stream === "both" ? [false, true] : values.stream === "on" ? [true] : values.stream === "off" ? [false] : (() => { throw new Error("--stream must be on, off or both"); })();
const wanted = new Set((values.targets ?? "direct,bare,gateway").split(",").map((s) => s.trim()));
const flakyRate = values["flaky-rate"] !== undefined ? num("flaky-rate", values["flaky-rate"], 0, 1) : undefined;
const repeat = Math.round(num("repeat", values.repeat, 1, 20));
const together = values.together === true;
const abortRate = values["abort-rate"] !== undefined ? num("abort-rate", values["abort-rate"], 0, 1) : undefined;
const apis = new Set(values.api.split(",").map((s) => s.trim()));
for (const a of apis) if (a !== "chat" && a !== "messages") throw new Error(`--api takes chat and/or messages (got ${a})`);
const model = values.model ?? (flakyRate !== undefined ? BENCH_FLAKY_MODEL : BENCH_MODEL);
/** What a target requests: --model, else its config's own model. */
const modelOf = (t: LoadTarget) => t.model ?? model;
const variants = (values.gateway?.length ? values.gateway : ["gateway=shipped"]).map((g) => {
  const eq = g.indexOf("=");
  if (eq < 1) throw new Error(`--gateway wants NAME=SPEC (got ${g})`);
  const rest = g.slice(eq + 1);
  const at = rest.lastIndexOf("@/");
  return { name: g.slice(0, eq), spec: at === -1 ? rest : rest.slice(0, at), root: at === -1 ? undefined : rest.slice(at + 1) };
});

/** --workers: one count for every variant, or NAME=N pairs. */
const workersOf = (() => {
  const v = values.workers.trim();
  const count = (n: string) => Math.round(num("workers", n, 1, 64));
  if (!v.includes("=")) {
    const n = count(v);
    return () => n;
  }
  const per = new Map(v.split(",").map((pair) => {
    const [name, n] = pair.split("=");
    if (!name || !n) throw new Error(`--workers wants N or NAME=N,NAME=N (got ${v})`);
    if (!variants.some((x) => x.name === name)) throw new Error(`--workers names ${name}, which is no --gateway variant`);
    return [name, count(n)] as const;
  }));
  return (name: string) => per.get(name) ?? 1;
})();

/** --console NAME=open|off. */
const consoleOf = (() => {
  const per = new Map<string, "open" | "off">();
  for (const pair of values.console ?? []) {
    const [name, how] = pair.split("=");
    if (!name || (how !== "open" && how !== "off")) throw new Error(`--console wants NAME=open or NAME=off (got ${pair})`);
    if (!variants.some((x) => x.name === name)) throw new Error(`--console names ${name}, which is no --gateway variant`);
    per.set(name, how);
  }
  return (name: string) => per.get(name);
})();
const consoles: { name: string; page: OpenConsole }[] = [];

const gatewayNames: string[] = [];
/** Each gateway variant's stderr (its log) and the targets it serves. */
const logs: { name: string; file: string; targets: LoadTarget[] }[] = [];

/** --slow-streams runs through the gateway, or through the bare proxy with `--targets bare` (one target, one process). */
function slowStreamsThroughBare(): boolean {
  if (values.targets === undefined || values.targets === "gateway") return false;
  if (values.targets !== "bare") throw new Error(`--slow-streams runs one target: --targets gateway (the default) or bare, not ${values.targets}`);
  if (values.workers !== "1") throw new Error("--slow-streams --targets bare runs one process: --workers is for the gateway");
  return true;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "mg-bench-"));
  if (slowStreams !== undefined) {
    process.stdout.write(`model-gateway slow-streams run — node ${process.version}, ${cpus().length} cpus, loadavg ${loadavg().map((l) => l.toFixed(2)).join(" ")}\n`);
    const ok = await runSlowStreams({
      streams: Math.round(num("slow-streams", slowStreams, 1, 100_000)),
      chunkDelayMs: num("chunk-delay-ms", values["chunk-delay-ms"], 0, 60_000),
      chunks: Math.round(num("chunks", values.chunks!, 1, 100_000)),
      dir,
      nodeArgs: values["node-args"].split(/\s+/).filter(Boolean),
      heapSnapshots: values["heap-snapshots"] ? resolve(values["heap-snapshots"]) : undefined,
      targetMb: 400,
      targetStreams: 10_000,
      workers: Math.round(num("workers", values.workers, 1, 64)),
      bare: slowStreamsThroughBare(),
    });
    if (!ok) process.exitCode = 1;
    return;
  }
  process.stdout.write(
    `model-gateway load run — node ${process.version}, ${cpus().length} cpus (${cpus()[0]?.model ?? "?"}), loadavg ${loadavg().map((l) => l.toFixed(2)).join(" ")}\n` +
      `phases: ${modes.join("+")} x ${streams.map((s) => (s ? "stream" : "non-stream")).join("+")}; warmup ${warmupMs / 1000}s + ${durationMs / 1000}s each; ` +
      `open ${rate} req/s, closed ${concurrency} connections; model ${values.model ?? `${model} (${SHIPPED_MODEL} on shipped variants)`}; ${values.chunks} chunks/stream\n` +
      `note: generator, upstream, bare proxy and gateway share this machine's cores — compare ratios, not absolutes.\n\n`,
  );

  const upArgs = ["--chunks", values.chunks!, "--chunk-delay-ms", values["chunk-delay-ms"]];
  const upstream = await startChild("upstream", await toolEntry("upstream"), upArgs);
  const upstreamOrigin = `http://127.0.0.1:${upstream.port}`;
  const flaky = flakyRate !== undefined
    ? await startChild("flaky-upstream", await toolEntry("upstream"), [...upArgs, "--fail-rate", String(flakyRate), "--fail-status", values["flaky-status"]])
    : undefined;
  const env = {
    MG_BENCH_UPSTREAM: `${upstreamOrigin}/v1`,
    MG_BENCH_FLAKY_UPSTREAM: flaky ? `http://127.0.0.1:${flaky.port}/v1` : "",
    MG_BENCH_KEY_SHA256: BENCH_KEY_SHA256,
    MG_BENCH_ADMIN_SHA256: BENCH_ADMIN_SHA256,
  };

  const targets: LoadTarget[] = [];
  if (wanted.has("direct")) {
    targets.push({ name: "direct", origin: upstreamOrigin, path: "/v1/chat/completions", headers: { "content-type": "application/json", authorization: `Bearer ${UPSTREAM_KEY}` }, pid: upstream.proc.pid });
  }
  if (wanted.has("bare")) {
    const bare = await startChild("bare-proxy", await toolEntry("bare-proxy"), ["--upstream", upstreamOrigin]);
    targets.push({ name: "bare-proxy", origin: `http://127.0.0.1:${bare.port}`, path: "/api/v1/chat/completions", headers: { "content-type": "application/json" }, pid: bare.proc.pid });
  }
  if (wanted.has("gateway")) {
    const nodeArgs = values["node-args"].split(/\s+/).filter(Boolean);
    for (const v of variants) {
      const own = join(dir, v.name);
      mkdirSync(own);
      let file: string;
      let variantEnv: Record<string, string> = env;
      let variantModel: string | undefined;
      if (v.spec === "shipped" || v.spec.startsWith("shipped:")) {
        file = join(own, "gateway.yaml");
        const shipped = shippedBenchConfig(env.MG_BENCH_UPSTREAM, v.root ? resolve(v.root) : undefined);
        // The bench admin key, for --console NAME=open (an admin key changes nothing on the request path).
        shipped.config.admin_keys = [...(shipped.config.admin_keys ?? []), { id: "bench", sha256: BENCH_ADMIN_SHA256, scope: "read" }];
        if (consoleOf(v.name) === "off") shipped.config.console = { ...shipped.config.console, enabled: false };
        for (const set of v.spec.slice(8).split(",").filter(Boolean)) setPath(shipped.config, set);
        writeFileSync(file, YAML.stringify(shipped.config));
        variantEnv = { ...env, ...shipped.env };
        variantModel = values.model ?? SHIPPED_MODEL;
      } else if (v.spec.startsWith("pipeline:")) {
        file = join(own, "gateway.yaml");
        const names = v.spec.slice(9).split(",").filter(Boolean);
        const pipeline = names.length === 1 && names[0] === "default" ? undefined : names;
        // Translation from the Messages API to a chat upstream is the stream-transcoder's job.
        if (pipeline && apis.has("messages") && !pipeline.includes("stream-transcoder")) pipeline.push("stream-transcoder");
        writeFileSync(file, YAML.stringify(benchConfig({ upstream: env.MG_BENCH_UPSTREAM, flakyUpstream: env.MG_BENCH_FLAKY_UPSTREAM || undefined, pipeline, consoleOff: consoleOf(v.name) === "off" })));
      } else file = resolve(v.spec);
      const workers = workersOf(v.name);
      const ownArgs = (values["node-args-for"] ?? []).filter((a) => a.startsWith(`${v.name}=`)).flatMap((a) => a.slice(v.name.length + 1).split(/\s+/).filter(Boolean));
      const logFile = join(own, "stderr.log");
      const gw = await startGatewayBin(v.name, { config: file, root: v.root ? resolve(v.root) : undefined, nodeArgs: [...nodeArgs, ...ownArgs], env: variantEnv, workers, logFile, timeoutMs: 60_000 * workers });
      logs.push({ name: v.name, file: logFile, targets: [] });
      const origin = `http://127.0.0.1:${gw.port}`;
      if (consoleOf(v.name) === "open") consoles.push({ name: v.name, page: await openConsole(origin, BENCH_ADMIN_KEY) });
      if (apis.has("chat")) {
        targets.push({ name: v.name, origin, path: "/api/v1/chat/completions", model: variantModel, headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}` }, pid: gw.pids });
        gatewayNames.push(v.name);
      }
      if (apis.has("messages")) {
        targets.push({
          name: `${v.name}-messages`, origin, path: "/api/v1/messages", api: "messages", pid: gw.pids, model: variantModel,
          headers: { "content-type": "application/json", "x-api-key": BENCH_KEY, "anthropic-version": "2023-06-01" },
        });
      }
      logs.at(-1)!.targets.push(...targets.filter((t) => t.origin === origin));
    }
  }

  // Every target answers correctly once before anything is timed.
  for (const t of targets) for (const stream of streams) await check(t, stream);

  const all: Result[] = [];
  const runs: Result[][] = [];
  for (let rep = 0; rep < repeat; rep++) {
    const run: Result[] = [];
    for (const mode of modes) {
      for (const stream of streams) {
        const byTarget = new Map<LoadTarget, Result>();
        // A fresh order each round when repeating: the machine's drift within a round then favours no target.
        const measure = async (t: LoadTarget) => {
          const pool = createPool(t.origin, mode === "closed" ? concurrency : 256);
          const cpu = { t: [NaN, NaN], up: [NaN, NaN] };
          const sys = [syscalls(undefined), syscalls(undefined)];
          const onWindow = (edge: "start" | "end") => {
            const i = edge === "start" ? 0 : 1;
            cpu.t[i] = cpuMs(t.pid);
            cpu.up[i] = cpuMs(upstream.proc.pid);
            sys[i] = syscalls(t.pid);
          };
          const phase = { stream, body: requestBody(modelOf(t), stream, t.api), warmupMs, durationMs, onWindow, abortRate };
          const r = mode === "open" ? await openLoop(pool, t, rate, phase) : await closedLoop(pool, t, concurrency, phase);
          const served = r.requests;
          r.cpuMsPerReq = (cpu.t[1]! - cpu.t[0]!) / served;
          r.upstreamCpuMsPerReq = (cpu.up[1]! - cpu.up[0]!) / served;
          r.sysReadsPerReq = (sys[1]!.reads - sys[0]!.reads) / served;
          r.sysWritesPerReq = (sys[1]!.writes - sys[0]!.writes) / served;
          await pool.close();
          byTarget.set(t, r);
        };
        if (together && mode === "closed") {
          // Every target loaded at once, over the same window: each sees the same machine (paired CPU figures).
          await Promise.all(targets.map(measure));
          await sleep(300);
        } else {
          for (const t of repeat > 1 ? shuffled(targets) : targets) {
            await measure(t);
            await sleep(300);
          }
        }
        const group = targets.map((t) => byTarget.get(t)!);
        run.push(...group);
        printGroup(group, mode, stream, repeat > 1 ? ` [run ${rep + 1}/${repeat}]` : "");
      }
    }
    runs.push(run);
  }
  if (repeat === 1) all.push(...runs[0]!);
  else {
    // Each figure is the median of its runs (ratios are then taken between medians).
    for (let i = 0; i < runs[0]!.length; i++) all.push(medianResult(runs.map((r) => r[i]!)));
    process.stdout.write(`==== median of ${repeat} runs\n\n`);
    for (const mode of modes) for (const stream of streams) printGroup(all.filter((r) => r.mode === mode && r.stream === stream), mode, stream, ` [median of ${repeat}]`);
    if (modes.includes("closed")) {
      process.stdout.write(`==== closed loop: req/s and CPU ms per request of each row / each column within a round, median of ${repeat} rounds (lowest-highest)\n\n`);
      for (const stream of streams) {
        const rounds = runs.map((run) => run.filter((r) => r.mode === "closed" && r.stream === stream));
        process.stdout.write(`== ${stream ? "streaming" : "non-streaming"}\n${pairedRatioTable(rounds)}\n\n${pairedRatioTable(rounds, "cpuMsPerReq")}\n\n`);
      }
    }
  }
  // Still serving correctly after everything above (hung-up clients included), and nobody crashed.
  for (const t of targets) for (const stream of streams) await check(t, stream);
  const dead = deadChildren();
  if (dead.length) throw new Error(`processes died during the run: ${dead.join(", ")}`);
  for (const c of consoles) process.stdout.write(`== console open on ${c.name}: ${c.page.adminCalls()} admin API requests from its two tabs during the run\n\n`);
  const v = verdicts(all, gatewayNames);
  if (v.length) process.stdout.write(`== targets (issue 32, "What to build" 2 and 3)\n${verdictTable(v)}\n`);
  // Every answered request wrote its access line (as shipped): counted once the gateways have flushed and exited.
  await stopChildren();
  for (const l of logs) {
    const text = readFileSync(l.file, "utf8");
    const lines = text.split("\n").filter(Boolean);
    const access = lines.filter((x) => x.includes('"msg":"request"')).length;
    const answered = l.targets.reduce((n, t) => n + (t.answered ?? 0), 0);
    const loud = lines.filter((x) => /"level":(40|50|60)/.test(x));
    process.stdout.write(`== ${l.name}: ${access} access lines for ${answered} requests answered (${l.file})${loud.length ? `; ${loud.length} warn/error lines, first: ${loud[0]!.slice(0, 300)}` : ""}\n`);
    // None at all: a config with the access log off (log.access: false, or a level above info).
    if (access > 0 && access < answered) throw new Error(`${l.name}: ${answered - access} access lines missing`);
  }
  if (values.json) writeFileSync(values.json, JSON.stringify({ options: values, results: all, runs: repeat > 1 ? runs : undefined, verdicts: v }, null, 2));
}

/** `a.b.c=value` (the value read as YAML) set in a config object: \`shipped:store.fsync=false\`. */
function setPath(config: Record<string, any>, assignment: string): void {
  const eq = assignment.indexOf("=");
  if (eq < 1) throw new Error(`shipped:PATH=VALUE wanted (got ${assignment})`);
  const path = assignment.slice(0, eq).split(".");
  let o = config;
  for (const k of path.slice(0, -1)) o = o[k] ??= {};
  o[path.at(-1)!] = YAML.parse(assignment.slice(eq + 1));
}

function printGroup(group: Result[], mode: "open" | "closed", stream: boolean, suffix: string): void {
  const title = mode === "open" ? `open loop, ${rate} req/s offered` : `closed loop, ${concurrency} connections`;
  process.stdout.write(`== ${title}, ${stream ? "streaming" : "non-streaming"}${suffix} (latency ms to last byte${mode === "open" ? ", from scheduled send" : ""})\n${groupTable(group)}\n\n`);
}

function medianResult(rs: Result[]): Result {
  const med = (xs: number[]) => {
    const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
    return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN;
  };
  const out = { ...rs[0]! } as Record<string, unknown>;
  for (const k of ["rps", "p50", "p90", "p99", "max", "ttfbP50", "cpuMsPerReq", "upstreamCpuMsPerReq", "sysReadsPerReq", "sysWritesPerReq"] as const) out[k] = med(rs.map((r) => r[k] ?? NaN));
  for (const k of ["requests", "errors", "aborted"] as const) out[k] = rs.reduce((a, r) => a + r[k], 0);
  return out as unknown as Result;
}

async function check(t: LoadTarget, stream: boolean): Promise<void> {
  const pool = createPool(t.origin, 1);
  let last = "";
  try {
    // A flaky provider without fallback may fail some requests: one success in three tries proves the path.
    for (let i = 0; i < 3; i++) {
      const r = await fetchText(pool, t, requestBody(modelOf(t), stream, t.api));
      last = `${t.name} ${stream ? "stream" : "json"}: HTTP ${r.status} ${r.text.slice(0, 300)}`;
      if (r.status !== 200) continue;
      if (t.name !== "direct" && t.name !== "bare-proxy" && typeof r.headers["x-request-id"] !== "string") throw new Error(`${t.name}: no x-request-id`);
      if (t.api === "messages") {
        checkMessages(last, r.text, stream);
      } else if (stream) {
        const frames = r.text.split("\n\n").filter((s) => s.startsWith("data: "));
        if (frames.at(-1) !== "data: [DONE]" || frames.length < Number(values.chunks) + 3) throw new Error(`${last}: malformed stream (${frames.length} frames)`);
        JSON.parse(frames[1]!.slice(6));
      } else {
        const body = JSON.parse(r.text);
        if (typeof body.choices?.[0]?.message?.content !== "string") throw new Error(`${last}: no message content`);
        if (gatewayNames.includes(t.name) && !body.providerMetadata?.gateway?.generationId) throw new Error(`${t.name}: no providerMetadata.gateway`);
      }
      return;
    }
    throw new Error(`setup check failed: ${last}`);
  } finally {
    await pool.close();
  }
}

/** A translated Messages answer: the text of every upstream chunk, and for streams named events ending in message_stop. */
function checkMessages(last: string, text: string, stream: boolean): void {
  if (!stream) {
    const body = JSON.parse(text);
    if (body.type !== "message" || body.content?.[0]?.type !== "text") throw new Error(`${last}: not a messages response`);
    return;
  }
  const frames = text.split("\n\n").filter(Boolean);
  const names = frames.map((f) => f.match(/^event: (\w+)/)?.[1]);
  if (names[0] !== "message_start" || names.at(-1) !== "message_stop") throw new Error(`${last}: malformed messages stream`);
  const deltas = names.filter((n) => n === "content_block_delta").length;
  if (deltas < Number(values.chunks)) throw new Error(`${last}: ${deltas} text deltas for ${values.chunks} upstream chunks`);
}

try {
  await main();
} catch (err) {
  process.stderr.write(`bench:load failed: ${(err as Error).stack ?? err}\n`);
  process.exitCode = 1;
} finally {
  for (const c of consoles) await c.page.close();
  await stopChildren();
}
// A connection or timer left behind (the client pool after 10 000 streams) must not keep a finished run waiting.
process.exit();
