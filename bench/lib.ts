// Shared helpers for bench/*.bench.ts: a group of tinybench tasks timed in the same run, printed as ratios
// against the group's baseline. Every task's `check` runs once before timing, so a bench never times broken code.
import { Bench } from "tinybench";

export interface BenchTask {
  name: string;
  fn: () => unknown | Promise<unknown>;
  /** Runs once before timing; throw if the task's output is wrong. */
  check?: () => void | Promise<void>;
}

export interface GroupOptions {
  /** Name of the task the others are compared with (default: the first). */
  baseline?: string;
  /** Work items per call (e.g. SSE frames per stream): adds a "per item" column. */
  perItem?: { count: number; unit: string };
  /** Milliseconds of timing per task (default 700; BENCH_TIME overrides). */
  time?: number;
}

export function assert(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Error(`bench check failed: ${message}`);
}

export function assertEqual(actual: unknown, expected: unknown, message: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`bench check failed: ${message}\n  expected ${e.slice(0, 400)}\n  actual   ${a.slice(0, 400)}`);
}

const fmt = (ms: number) => (ms >= 1 ? `${ms.toFixed(3)} ms` : `${(ms * 1000).toFixed(2)} µs`);

export interface GroupResult {
  title: string;
  rows: Array<{ name: string; meanMs: number; p50Ms: number; p99Ms: number; rme: number; samples: number; ratio: number }>;
}

/** BENCH_FILTER=regex runs only the groups whose title matches. */
/** A copy of `xs` in random order (Fisher-Yates): benches that time several targets in rounds vary their order. */
export function shuffled<T>(xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export const selected = (title: string) => !process.env.BENCH_FILTER || new RegExp(process.env.BENCH_FILTER, "i").test(title);

export async function runGroup(title: string, tasks: BenchTask[], opts: GroupOptions = {}): Promise<GroupResult> {
  if (!selected(title)) return { title, rows: [] };
  for (const t of tasks) {
    try {
      await t.check?.();
    } catch (err) {
      throw new Error(`${title} / ${t.name}: ${(err as Error).message}`);
    }
  }
  const time = Number(process.env.BENCH_TIME) || opts.time || 700;
  const bench = new Bench({ name: title, time, warmupTime: Math.min(200, time / 2), throws: true });
  for (const t of tasks) bench.add(t.name, t.fn);
  await bench.run();
  const stats = bench.tasks.map((task) => {
    const r = task.result;
    if (r.state !== "completed") throw new Error(`${title} / ${task.name}: ${r.state}${"error" in r ? `: ${String(r.error)}` : ""}`);
    return { name: task.name, meanMs: r.latency.mean, p50Ms: r.latency.p50, p99Ms: r.latency.p99, rme: r.latency.rme, samples: r.latency.samplesCount };
  });
  const base = stats.find((s) => s.name === (opts.baseline ?? tasks[0]!.name)) ?? stats[0]!;
  // Medians, not means: on a shared 2-core machine a few preempted samples move the mean a lot.
  const rows = stats.map((s) => ({ ...s, ratio: s.p50Ms / base.p50Ms }));
  const header = ["task", "p50", "mean", "p99", "±mean", ...(opts.perItem ? [`p50 per ${opts.perItem.unit}`] : []), "samples", `p50 vs ${base.name}`];
  const lines = [header, ...rows.map((r) => [
    r.name, fmt(r.p50Ms), fmt(r.meanMs), fmt(r.p99Ms), `${r.rme.toFixed(1)}%`,
    ...(opts.perItem ? [fmt(r.p50Ms / opts.perItem.count)] : []), String(r.samples),
    r === rows.find((x) => x.name === base.name) ? "1.00 (baseline)" : `${r.ratio.toFixed(2)}x`,
  ])];
  const widths = header.map((_, c) => Math.max(...lines.map((l) => l[c]!.length)));
  process.stdout.write(`== ${title}\n${lines.map((l) => l.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ")).join("\n")}\n\n`);
  return { title, rows };
}
