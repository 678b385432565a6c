// Child processes of a load run: each prints `READY {"port":N}` once listening; all are killed (by pid) at the end.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export interface Child {
  name: string;
  port: number;
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

/** Start `node [nodeArgs] --import tsx file args` and wait for its READY line (bounded). */
export function startChild(name: string, file: string, args: string[], opts: { nodeArgs?: string[]; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Child> {
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), "--import", "tsx", file, ...args], {
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
      const ready = JSON.parse(line.slice(6)) as { port: number; pids?: number[] };
      resolve({ name, port: ready.port, proc, pids: ready.pids ?? [proc.pid!] });
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
