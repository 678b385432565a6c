// Tables of one load run: every figure next to its baselines from the same run (ratios, added latency).
import type { Result } from "./loops.ts";

const f = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : "-");
const signed = (n: number) => (Number.isFinite(n) ? `${n >= 0 ? "+" : ""}${n.toFixed(2)}` : "-");

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ")).join("\n");
}

export function groupTable(results: Result[]): string {
  const direct = results.find((r) => r.target === "direct");
  const bare = results.find((r) => r.target === "bare-proxy");
  const rows = [["target", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "ttfb p50", "errors", "cpu ms/req", "sys r/w per req", "rps/bare", "rps/direct", "p50 vs direct", "p50 vs bare"]];
  for (const r of results) {
    rows.push([
      r.target, f(r.rps, 0), f(r.p50), f(r.p90), f(r.p99), f(r.max, 1), f(r.ttfbP50), `${r.errors}/${r.requests}${r.aborted ? ` (+${r.aborted} hung up)` : ""}`, f(r.cpuMsPerReq ?? NaN, 3), `${f(r.sysReadsPerReq ?? NaN, 1)}/${f(r.sysWritesPerReq ?? NaN, 1)}`,
      bare ? f(r.rps / bare.rps) : "-", direct ? f(r.rps / direct.rps) : "-",
      direct ? signed(r.p50 - direct.p50) : "-", bare ? signed(r.p50 - bare.p50) : "-",
    ]);
  }
  return table(rows);
}

/**
 * Throughput ratios taken within each round, then the median over rounds (with the lowest and highest): on a
 * shared machine a target's speed drifts by tens of percent between rounds, and a ratio of two targets measured
 * seconds apart, in the same round, carries less of that drift than a ratio of two medians. Row / column, for every
 * target against every other.
 */
export function pairedRatios(rounds: Result[][], key: "rps" | "cpuMsPerReq" = "rps"): { target: string; against: string; median: number; min: number; max: number }[] {
  const names = rounds[0]?.map((r) => r.target) ?? [];
  const out = [];
  for (const target of names) {
    for (const against of names) {
      if (target === against) continue;
      const xs = rounds.map((round) => {
        const a = round.find((r) => r.target === target), b = round.find((r) => r.target === against);
        return a && b ? (a[key] ?? NaN) / (b[key] ?? NaN) : NaN;
      }).filter(Number.isFinite).sort((x, y) => x - y);
      if (!xs.length) continue;
      const mid = xs.length >> 1;
      out.push({ target, against, median: xs.length % 2 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2, min: xs[0]!, max: xs.at(-1)! });
    }
  }
  return out;
}

export function pairedRatioTable(rounds: Result[][], key: "rps" | "cpuMsPerReq" = "rps"): string {
  const names = rounds[0]?.map((r) => r.target) ?? [];
  const ratios = pairedRatios(rounds, key);
  const rows = [[key === "rps" ? "req/s ratio, per round" : "CPU/req ratio, per round", ...names.map((n) => `/ ${n}`)]];
  for (const t of names) {
    rows.push([t, ...names.map((a) => {
      const r = ratios.find((x) => x.target === t && x.against === a);
      return r ? `${f(r.median)} (${f(r.min)}-${f(r.max)})` : "-";
    })]);
  }
  return table(rows);
}

export interface Verdict {
  label: string;
  value: string;
  pass: boolean;
}

/**
 * Issue 32's targets, per gateway variant and stream setting, against the bare proxy of the same run: closed-loop
 * throughput >= 0.80 of it, CPU per request <= 1.5x its own, added p50 at the open-loop rate <= 0.1 ms.
 */
export function verdicts(all: Result[], gateways: string[]): Verdict[] {
  const out: Verdict[] = [];
  for (const stream of [false, true]) {
    const kind = stream ? "stream" : "json";
    const closed = all.filter((r) => r.mode === "closed" && r.stream === stream);
    const open = all.filter((r) => r.mode === "open" && r.stream === stream);
    const cb = closed.find((r) => r.target === "bare-proxy");
    const ob = open.find((r) => r.target === "bare-proxy");
    for (const g of gateways) {
      const cg = closed.find((r) => r.target === g);
      if (cg && cb) {
        const ratio = cg.rps / cb.rps;
        out.push({ label: `closed ${kind}: ${g} req/s / bare proxy >= 0.80`, value: `${f(ratio)} (${f(cg.rps, 0)} vs ${f(cb.rps, 0)} req/s)`, pass: ratio >= 0.8 });
        const cpu = (cg.cpuMsPerReq ?? NaN) / (cb.cpuMsPerReq ?? NaN);
        out.push({ label: `closed ${kind}: ${g} CPU per request / bare proxy's <= 1.5`, value: `${f(cpu)} (${f(cg.cpuMsPerReq ?? NaN, 3)} vs ${f(cb.cpuMsPerReq ?? NaN, 3)} ms)`, pass: cpu <= 1.5 });
      }
      const og = open.find((r) => r.target === g);
      if (og && ob) {
        const added = og.p50 - ob.p50;
        out.push({ label: `open ${kind}: ${g} p50 - bare proxy p50 <= 0.1 ms`, value: `${signed(added)} ms (${f(og.p50)} vs ${f(ob.p50)})`, pass: added <= 0.1 });
      }
    }
  }
  return out;
}

export function verdictTable(v: Verdict[]): string {
  return table([["target", "measured", "result"], ...v.map((x) => [x.label, x.value, x.pass ? "PASS" : "MISS"])]);
}
