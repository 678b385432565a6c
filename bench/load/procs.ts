// Child processes of a load run: each prints `READY {"port":N}` once listening; all are killed (by pid) at the end.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

export interface Child {
  name: string;
  port: number;
  /** The gateway's metrics listener, when it printed one. */
  metricsPort?: number;
  proc: ChildProcess;
  /** Every process serving (a gateway with --workers: the primary and its workers), when READY listed them. */
  pids: number[];
}

const children = new Set<ChildProcess>();
const died: string[] = [];
let stopping = false;

/** Children that exited on their own after they were ready (a crash under load). */
export const deadChildren = () => [...died];

export function benchFile(name: string): string {
  return fileURLToPath(new URL(name, import.meta.url));
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * bench/load/gateway.ts bundled by the checkout's own bin/build.mjs (into dist/bench/, rebuilt when a source is
 * newer), run by plain node with source maps like the bin: what the soak run starts (it logs at warn unless
 * MG_BENCH_LOG=config). A checkout without bin/build.mjs, or whose build fails, runs its sources with tsx.
 */
export async function gatewayEntry(root = ROOT): Promise<string> {
  const source = join(root, "bench/load/gateway.ts");
  const helper = join(root, "bin/build.mjs");
  if (!existsSync(helper)) return source;
  try {
    const { ensureBuilt } = await import(pathToFileURL(helper).href);
    const spec = { outdir: "dist/bench", entries: { gateway: "bench/load/gateway.ts" }, watch: ["core", "plugins", "providers", "bench/load"] };
    return (await ensureBuilt(spec, root)).gateway as string;
  } catch (err) {
    process.stderr.write(`bundling ${source} failed, running it with tsx: ${(err as Error).message.split("\n")[0]}\n`);
    return source;
  }
}

/**
 * The fake upstream and the bare proxy as plain JavaScript: bundled by bin/build.mjs exactly as the gateway is
 * (esbuild, no keepNames, no tsx loader thread), so the baseline is not slowed down by tsx — through tsx the bare
 * proxy cost 1.45x the CPU per request (issue 32). Falls back to the sources with tsx when the build fails.
 */
export async function toolEntry(name: "upstream" | "bare-proxy"): Promise<string> {
  const source = join(ROOT, `bench/load/${name}.ts`);
  try {
    const { ensureBuilt } = await import(pathToFileURL(join(ROOT, "bin/build.mjs")).href);
    const spec = { outdir: "dist/bench-tools", entries: { upstream: "bench/load/upstream.ts", "bare-proxy": "bench/load/bare-proxy.ts" }, watch: ["bench/load"] };
    return (await ensureBuilt(spec, ROOT))[name] as string;
  } catch (err) {
    process.stderr.write(`bundling ${source} failed, running it with tsx (a slower baseline): ${(err as Error).message.split("\n")[0]}\n`);
    return source;
  }
}

/** Start `node [nodeArgs] file args` (a .ts file with `--import tsx`) and wait for its READY line (bounded). */
export function startChild(name: string, file: string, args: string[], opts: { nodeArgs?: string[]; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Child> {
  const loader = file.endsWith(".ts") ? ["--import", "tsx"] : ["--enable-source-maps"]; // a bundle: as the bin runs it
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...loader, file, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...opts.env },
  });
  return whenReady(name, proc, opts.timeoutMs ?? 20_000, (line) => {
    if (!line.startsWith("READY ")) return void process.stderr.write(`[${name}] ${line}\n`);
    return JSON.parse(line.slice(6)) as Ready;
  });
}

export interface GatewayStart {
  /** The gateway.yaml to start with. */
  config: string;
  /** The checkout whose bin/model-gateway.mjs runs (default: this one). */
  root?: string;
  nodeArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** `start --workers N` when > 1. */
  workers?: number;
  /** The gateway's stderr (its log, access lines included) is appended here, as `2>>file` would. */
  logFile: string;
  timeoutMs?: number;
}

/**
 * The gateway as users start it: `node bin/model-gateway.mjs start --config FILE` (the bundle in dist/, built when
 * stale, file watching on), on 127.0.0.1 and free ports, logging as its config says — as shipped, JSON lines on
 * stderr, which go to `logFile`. Ready when the start banner is out; its URL, metrics URL and pids are read from it.
 * A checkout without the bin (older than the bundled runtime) runs bench/load/gateway.ts as before.
 */
export async function startGatewayBin(name: string, o: GatewayStart): Promise<Child> {
  const root = o.root ?? ROOT;
  const bin = join(root, "bin/model-gateway.mjs");
  const workers = o.workers && o.workers > 1 ? ["--workers", String(o.workers)] : [];
  if (!existsSync(bin)) return startChild(name, await gatewayEntry(root), ["--config", o.config, ...workers], o);
  const log = openSync(o.logFile, "a");
  const proc = spawn(process.execPath, [...(o.nodeArgs ?? []), bin, "start", "--config", o.config, "--port", "0", "--host", "127.0.0.1", "--metrics-port", "0", ...workers], {
    cwd: root,
    stdio: ["ignore", "pipe", log],
    env: { ...process.env, ...o.env },
  });
  closeSync(log); // the child has its own descriptor
  let banner = "";
  return whenReady(name, proc, o.timeoutMs ?? 60_000, (line) => {
    banner += `${line}\n`;
    // model-gateway listening on URL (config F; pid P | primary pid P, N workers, pids A B)\n  base_url: ... metrics: URL ...
    const m = /listening on http:\/\/[^:]+:(\d+) \(config .*; (?:primary )?pid (\d+)(?:, \d+ workers, pids ([\d ]+))?\)\n.*metrics: (\S+)/.exec(banner);
    if (!m) return;
    const metrics = /^http:\/\/[^:]+:(\d+)/.exec(m[4]!);
    return { port: Number(m[1]), metricsPort: metrics ? Number(metrics[1]) : undefined, pids: [Number(m[2]), ...(m[3] ? m[3].split(" ").map(Number) : [])] };
  });
}

interface Ready {
  port: number;
  metricsPort?: number;
  pids?: number[];
}

/** Resolves once `ready` turns one of the child's stdout lines into its address (bounded by `timeoutMs`). */
function whenReady(name: string, proc: ChildProcess, timeoutMs: number, ready: (line: string) => Ready | undefined): Promise<Child> {
  children.add(proc);
  proc.once("exit", () => children.delete(proc));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not start within ${timeoutMs} ms`)), timeoutMs);
    const lines = createInterface({ input: proc.stdout! });
    let done = false;
    const fail = (err: Error) => {
      clearTimeout(timer);
      proc.kill("SIGKILL");
      reject(err);
    };
    proc.once("exit", (code) => fail(new Error(`${name} exited with code ${code} before it was ready`)));
    lines.on("line", (line) => {
      // After the address: the rest of a start banner (indented) is not news; anything else is shown.
      if (done) return void (line.startsWith("  ") || process.stderr.write(`[${name}] ${line}\n`));
      const r = ready(line);
      if (!r) return;
      done = true;
      clearTimeout(timer);
      proc.removeAllListeners("exit");
      proc.once("exit", (code, signal) => {
        children.delete(proc);
        if (!stopping) died.push(`${name} (exit ${code ?? signal})`);
      });
      resolve({ name, port: r.port, metricsPort: r.metricsPort, proc, pids: r.pids ?? [proc.pid!] });
    });
  });
}

/** SIGTERM each child we started (they exit through their own close path, which writes --cpu-prof files). */
export async function stopChildren(): Promise<void> {
  stopping = true;
  const waits = [...children].map((p) => new Promise<void>((resolve) => {
    if (p.exitCode !== null) return resolve();
    const t = setTimeout(() => { p.kill("SIGKILL"); resolve(); }, 5000);
    p.once("exit", () => { clearTimeout(t); resolve(); });
    p.kill("SIGTERM");
  }));
  await Promise.all(waits);
}

// Never leave orphans, even when the generator dies on an uncaught error.
process.on("exit", () => {
  for (const p of children) if (p.exitCode === null) p.kill("SIGTERM");
});
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => void stopChildren().finally(() => process.exit(130)));
}

/** CPU time (user + system, ms) a process (or the sum over several) has used so far, from /proc (Linux); NaN elsewhere. */
export function cpuMs(pid: number | number[] | undefined): number {
  if (Array.isArray(pid)) return pid.reduce((sum, p) => sum + cpuMs(p), 0);
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS; // utime, stime (fields 14, 15)
  } catch {
    return NaN;
  }
}
const CLOCK_TICKS = 100; // USER_HZ on Linux

/** Read- and write-family system calls a process (or several) made so far (`syscr`, `syscw` of /proc/PID/io). */
export function syscalls(pid: number | number[] | undefined): { reads: number; writes: number } {
  const pids = Array.isArray(pid) ? pid : pid === undefined ? [] : [pid];
  const out = { reads: pids.length ? 0 : NaN, writes: pids.length ? 0 : NaN };
  for (const p of pids) {
    try {
      const io = readFileSync(`/proc/${p}/io`, "utf8");
      out.reads += Number(/^syscr: (\d+)/m.exec(io)?.[1] ?? NaN);
      out.writes += Number(/^syscw: (\d+)/m.exec(io)?.[1] ?? NaN);
    } catch {
      return { reads: NaN, writes: NaN };
    }
  }
  return out;
}
