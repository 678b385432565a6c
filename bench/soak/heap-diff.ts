// Which objects a soak run's gateway kept: compares two V8 heap snapshots (each taken after a full GC) by
// constructor name — count and self size — and prints the biggest growths. The soak run writes one at the
// 2-minute mark and one at the end (bench/soak/gc-probe.mjs):
//   npm run bench:soak -- --heap-snapshots /tmp/snap
//   npx tsx bench/soak/heap-diff.ts /tmp/snap/soak-<pid>-1.heapsnapshot /tmp/snap/soak-<pid>-2.heapsnapshot [top]
// A leak shows as a type whose count grows with the requests served in between; a plateau shows small noise.
import { readFileSync } from "node:fs";

interface Totals { count: number; size: number }

function load(file: string): Map<string, Totals> {
  const snap = JSON.parse(readFileSync(file, "utf8"));
  const f: string[] = snap.snapshot.meta.node_fields;
  const types: string[] = snap.snapshot.meta.node_types[0];
  const [iType, iName, iSize] = [f.indexOf("type"), f.indexOf("name"), f.indexOf("self_size")];
  const nodes: number[] = snap.nodes;
  const strings: string[] = snap.strings;
  const out = new Map<string, Totals>();
  for (let i = 0; i < nodes.length; i += f.length) {
    const type = types[nodes[i + iType]!]!;
    // Strings, code and arrays by type only (their "names" are their contents); objects by constructor.
    const name = type === "object" || type === "closure" ? `${type} ${strings[nodes[i + iName]!]}` : type;
    const t = out.get(name) ?? { count: 0, size: 0 };
    t.count++;
    t.size += nodes[i + iSize]!;
    out.set(name, t);
  }
  return out;
}

const [a, b, topArg] = process.argv.slice(2);
if (!a || !b) throw new Error("usage: heap-diff.ts BEFORE.heapsnapshot AFTER.heapsnapshot [top]");
const before = load(a);
const after = load(b);
const sum = (m: Map<string, Totals>) => [...m.values()].reduce((s, t) => ({ count: s.count + t.count, size: s.size + t.size }), { count: 0, size: 0 });
const [tb, ta] = [sum(before), sum(after)];
console.log(`live heap: ${(tb.size / 1048576).toFixed(1)} MB, ${tb.count} objects -> ${(ta.size / 1048576).toFixed(1)} MB, ${ta.count} objects`);
const rows = [...new Set([...before.keys(), ...after.keys()])].map((k) => {
  const x = before.get(k) ?? { count: 0, size: 0 };
  const y = after.get(k) ?? { count: 0, size: 0 };
  return { k, dCount: y.count - x.count, dSize: y.size - x.size, count: y.count };
});
rows.sort((p, q) => q.dSize - p.dSize);
console.log(`${"Δ bytes".padStart(12)} ${"Δ count".padStart(9)} ${"count".padStart(9)}  type / constructor`);
for (const r of rows.slice(0, Number(topArg ?? 25))) console.log(`${String(r.dSize).padStart(12)} ${String(r.dCount).padStart(9)} ${String(r.count).padStart(9)}  ${r.k}`);
