// Summarise V8's --trace-gc-nvp lines from a bench:load run, per gateway variant: how many young-generation GCs
// (scavenges), their total pause, and what share of the allocation survived them. A share well above what the
// requests in flight can hold means something keeps finished requests reachable (issue 11, round 4):
//   npx tsx bench/load/run.ts --targets gateway --modes closed --stream off --concurrency 1 \
//     --gateway full=bench/policies/full-default.yaml "--node-args=--trace-gc-nvp" > /tmp/gc.txt
//   npx tsx bench/load/gc-summary.ts /tmp/gc.txt
import { readFileSync } from "node:fs";

const file = process.argv[2];
if (!file) throw new Error("usage: gc-summary FILE (bench:load output with --node-args=--trace-gc-nvp)");

interface Totals { scavenges: number; pauseMs: number; allocated: number; survived: number; promoted: number; majors: number; majorPauseMs: number }
const byVariant = new Map<string, Totals>();

for (const line of readFileSync(file, "utf8").split("\n")) {
  const m = /^\[([^\]]+)\].*\bgc=(\w+)/.exec(line);
  if (!m) continue;
  const fields = new Map(line.split(/\s+/).map((kv) => kv.split("=") as [string, string]));
  const t = byVariant.get(m[1]!) ?? { scavenges: 0, pauseMs: 0, allocated: 0, survived: 0, promoted: 0, majors: 0, majorPauseMs: 0 };
  byVariant.set(m[1]!, t);
  const pause = Number(fields.get("pause") ?? 0);
  if (m[2] === "s") {
    t.scavenges++;
    t.pauseMs += pause;
    t.allocated += Number(fields.get("allocated") ?? 0);
    t.survived += Number(fields.get("new_space_survived") ?? 0);
    t.promoted += Number(fields.get("promoted") ?? 0);
  } else {
    t.majors++;
    t.majorPauseMs += pause;
  }
}

const mb = (b: number) => (b / 1e6).toFixed(0);
console.log("variant        scavenges  pause ms (mean)   allocated MB  survived MB (share)  promoted MB  major GCs  pause ms");
for (const [name, t] of byVariant) {
  const share = t.allocated ? ((100 * t.survived) / t.allocated).toFixed(1) : "-";
  console.log(`${name.padEnd(14)} ${String(t.scavenges).padStart(9)}  ${t.pauseMs.toFixed(0).padStart(8)} (${(t.pauseMs / Math.max(1, t.scavenges)).toFixed(1)})`
    + `   ${mb(t.allocated).padStart(12)}  ${mb(t.survived).padStart(11)} (${share} %)  ${mb(t.promoted).padStart(11)}  ${String(t.majors).padStart(9)}  ${t.majorPauseMs.toFixed(0).padStart(8)}`);
}
