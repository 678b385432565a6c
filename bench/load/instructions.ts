// Instructions per request, counted by valgrind's callgrind: a figure that does not move with the machine's load
// (issue 32: before/after of single changes on a shared, busy machine, where throughput and even CPU time do not
// hold still). The gateway runs as users start it (bin/model-gateway.mjs start, the shipped config shape, logging to
// a file) under callgrind; after a warm-up the counters are zeroed (callgrind_control --zero), N requests are sent
// (closed loop, C connections) and the counters dumped (callgrind_control --dump): user-space instructions of the
// whole gateway process (every thread) per request. Kernel work (the socket writes themselves) is not counted.
//   npx tsx bench/load/instructions.ts [--stream on|off] [--requests 1000] [--warmup 1500] [--concurrency 8]
//     [--variant NAME=@/path/to/checkout ...]   (default: this checkout; variants are measured one after another)
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import YAML from "yaml";
import { BENCH_KEY } from "./config.ts";
import { createPool, requestBody, send, type LoadTarget } from "./client.ts";
import { startChild, stopChildren, toolEntry } from "./procs.ts";
import { shippedBenchConfig, SHIPPED_MODEL } from "./shipped.ts";

const { values } = parseArgs({
  options: {
    stream: { type: "string", default: "off" },
    requests: { type: "string", default: "1000" },
    warmup: { type: "string", default: "1500" },
    concurrency: { type: "string", default: "8" },
    variant: { type: "string", multiple: true },
  },
});
const stream = values.stream === "on";
const N = Number(values.requests);
const C = Number(values.concurrency);
const ROOT = resolve(import.meta.dirname, "../..");
const variants = (values.variant ?? ["this=@" + ROOT]).map((v) => {
  const [name, at] = v.split("=@");
  return { name: name!, root: resolve(at ?? ROOT) };
});

const dir = mkdtempSync(join(tmpdir(), "mg-instr-"));
const upstream = await startChild("upstream", await toolEntry("upstream"), ["--chunks", "50"]);
const body = requestBody(SHIPPED_MODEL, stream);

/** `n` requests, `C` at a time; fails on any answer that is not a complete 200. */
async function load(target: LoadTarget, n: number): Promise<void> {
  const pool = createPool(target.origin, C);
  let started = 0, bad = 0;
  await Promise.all(Array.from({ length: C }, () => new Promise<void>((done) => {
    const next = () => {
      if (started >= n) return done();
      started++;
      send(pool, target, body, stream, (d) => {
        if (!d.ok && bad++ === 0) process.stderr.write(`${target.name}: first failure, HTTP ${d.status}\n`);
        setImmediate(next);
      });
    };
    next();
  })));
  await pool.close();
  if (bad) throw new Error(`${target.name}: ${bad} of ${n} requests failed`);
}

for (const v of variants) {
  const own = join(dir, v.name);
  mkdirSync(own);
  const { config, env } = shippedBenchConfig(`http://127.0.0.1:${upstream.port}/v1`, v.root);
  // Under valgrind everything runs ~50x slower: store calls get the longest wait allowed (not 300 ms), or the store
  // would be taken for unavailable. The same for every variant; the hot path does not read it.
  config.store.timeout_ms = 60_000;
  const file = join(own, "gateway.yaml");
  writeFileSync(file, YAML.stringify(config));
  // Built before valgrind starts, so the build's child process is not counted.
  execFileSync(process.execPath, [join(v.root, "bin/build.mjs"), "--if-stale"], { stdio: "inherit" });
  const out = join(own, "callgrind.out");
  const proc = spawn("valgrind", ["--tool=callgrind", `--callgrind-out-file=${out}`, "--dump-instr=no", process.execPath, join(v.root, "bin/model-gateway.mjs"), "start", "--config", file, "--port", "0", "--host", "127.0.0.1", "--metrics-port", "0"], {
    cwd: v.root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"],
  });
  let banner = "", errText = "";
  proc.stderr!.on("data", (d) => (errText += d));
  const port = await new Promise<number>((ok, fail) => {
    proc.stdout!.on("data", (d) => {
      banner += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(banner);
      if (m) ok(Number(m[1]));
    });
    proc.once("exit", (code) => fail(new Error(`${v.name} exited (${code}) before listening:\n${errText.slice(-2000)}`)));
  });
  const target: LoadTarget = { name: v.name, origin: `http://127.0.0.1:${port}`, path: "/api/v1/chat/completions", headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}` } };
  await load(target, Number(values.warmup));
  await sleep(1500); // let the warm-up's deferred work (commits, checkpoints, log flushes) finish
  execFileSync("callgrind_control", ["--zero", String(proc.pid)], { stdio: "ignore" });
  await load(target, N);
  await sleep(1500);
  execFileSync("callgrind_control", ["--dump", String(proc.pid)], { stdio: "ignore" });
  proc.kill("SIGTERM");
  await new Promise((r) => proc.once("exit", r));
  // The dump after --zero: the highest-numbered file of this run (one per thread with --separate-threads=no: one).
  const dumps = readdirSync(own).filter((f) => f.startsWith("callgrind.out")).sort();
  const totals = dumps.map((f) => Number(/^(?:summary|totals): (\d+)/m.exec(readFileSync(join(own, f), "utf8"))?.[1] ?? NaN));
  const measured = totals.find((t, i) => dumps[i] !== "callgrind.out" && Number.isFinite(t)) ?? NaN;
  process.stdout.write(`${v.name.padEnd(12)} ${stream ? "stream" : "json  "} ${(measured / N / 1000).toFixed(1).padStart(9)} k instructions per request (${N} requests, ${C} at a time; ${dumps.join(", ")})\n`);
}
await stopChildren();
process.exit(0);
