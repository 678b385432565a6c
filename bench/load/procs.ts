// Child processes of a load run: each prints `READY {"port":N}` once listening; all are killed (by pid) at the end.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
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

/**
 * The gateway under test as `model-gateway start` runs it: bench/load/gateway.ts bundled by the checkout's own
 * bin/build.mjs (into dist/bench/, rebuilt when a source is newer), run by plain node with source maps like the bin.
 * A checkout without bin/build.mjs (older than the bundled runtime), or whose build fails, runs its sources with tsx.
 */
export async function gatewayEntry(root = fileURLToPath(new URL("../..", import.meta.url))): Promise<string> {
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

/** Start `node [nodeArgs] file args` (a .ts file with `--import tsx`) and wait for its READY line (bounded). */
export function startChild(name: string, file: string, args: string[], opts: { nodeArgs?: string[]; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Child> {
  const loader = file.endsWith(".ts") ? ["--import", "tsx"] : ["--enable-source-maps"]; // a bundle: as the bin runs it
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...loader, file, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...opts.env },
  });
  children.add(proc);
  proc.once("exit", () => children.delete(proc));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not start within ${opts.timeoutMs ?? 20_000} ms`)), opts.timeoutMs ?? 20_000);
    const lines = createInterface({ input: proc.stdout! });
    const fail = (err: Error) => {
      clearTimeout(timer);
      proc.kill("SIGKILL");
      reject(err);
    };
    proc.once("exit", (code) => fail(new Error(`${name} exited with code ${code} before it was ready`)));
    lines.on("line", (line) => {
      if (!line.startsWith("READY ")) return void process.stderr.write(`[${name}] ${line}\n`);
      clearTimeout(timer);
      proc.removeAllListeners("exit");
      proc.once("exit", (code, signal) => {
        children.delete(proc);
        if (!stopping) died.push(`${name} (exit ${code ?? signal})`);
      });
      const ready = JSON.parse(line.slice(6)) as { port: number; metricsPort?: number; pids?: number[] };
      resolve({ name, port: ready.port, metricsPort: ready.metricsPort, proc, pids: ready.pids ?? [proc.pid!] });
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
