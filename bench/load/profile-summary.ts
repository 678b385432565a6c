// Summarise a V8 .cpuprofile (from `--node-args=--cpu-prof`): self time by function and by module/package,
// and inclusive time of the project's own functions. `tsx bench/load/profile-summary.ts FILE [top]`
import { readFileSync } from "node:fs";

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }

/** This checkout (the bundle's chunks are under dist/): the project's own frames. */
const ROOT_URL = new URL("../..", import.meta.url).href;
const file = process.argv[2];
if (!file) throw new Error("usage: profile-summary FILE.cpuprofile [top]");
const top = Number(process.argv[3]) || 25;
const p = JSON.parse(readFileSync(file, "utf8")) as Profile;

const self = new Map<number, number>();
for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const total = [...self.values()].reduce((a, b) => a + b, 0);

function moduleOf(url: string, name: string): string {
  if (!url) return name.startsWith("(") ? name : "(native/builtin)";
  if (url.startsWith("node:")) return url.split("/")[0]!.replace(/^node:internal.*/, "node:internal");
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + 13).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  return url.startsWith(ROOT_URL) ? url.slice(ROOT_URL.length) : url;
}

const byFn = new Map<string, number>();
const byMod = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, t] of self) {
  const n = byId.get(id)!;
  const { functionName, url, lineNumber } = n.callFrame;
  const mod = moduleOf(url, functionName);
  byFn.set(`${functionName || "(anonymous)"} ${mod}:${lineNumber + 1}`, (byFn.get(`${functionName || "(anonymous)"} ${mod}:${lineNumber + 1}`) ?? 0) + t);
  byMod.set(mod, (byMod.get(mod) ?? 0) + t);
  // Inclusive time of project frames (each counted once per sample stack).
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const f = byId.get(cur)!.callFrame;
    if (!f.url.startsWith(ROOT_URL) || f.url.includes("node_modules")) continue;
    const key = `${f.functionName || "(anonymous)"} ${moduleOf(f.url, f.functionName)}:${f.lineNumber + 1}`;
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + t);
  }
}

const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
const show = (title: string, m: Map<string, number>) => {
  process.stdout.write(`\n== ${title}\n`);
  for (const [k, t] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(t)}  ${k}\n`);
};
process.stdout.write(`${file}: ${(total / 1e6).toFixed(2)} s sampled\n`);
show("self time by module", byMod);
show("self time by function", byFn);
show("inclusive time, project functions", inclusive);

// `--callers NAME` (3rd/4th arg): the stacks that lead to a function, heaviest first.
const callersOf = process.argv.indexOf("--callers");
if (callersOf > 0) {
  const name = process.argv[callersOf + 1]!;
  const stacks = new Map<string, number>();
  for (const [id, t] of self) {
    const chain: string[] = [];
    let hit = false;
    for (let cur: number | undefined = id; cur !== undefined && chain.length < 12; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (f.functionName === name) hit = true;
      if (hit) chain.push(`${f.functionName || "(anon)"}@${moduleOf(f.url, f.functionName)}:${f.lineNumber + 1}`);
    }
    if (hit) stacks.set(chain.join(" < "), (stacks.get(chain.join(" < ")) ?? 0) + t);
  }
  show(`stacks through ${name}`, stacks);
}
