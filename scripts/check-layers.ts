// Layering check (issue 12): no import cycles among core/, plugins/ and providers/ (type imports included), no
// core file importing plugins/ or providers/ except the one composition root that wires the built-ins, no
// provider importing plugins/, no plugin importing another plugin's files (what they share is in core/), and no
// driver importing another driver (DESIGN §4: a wire format several transports speak is a codec in
// providers/codecs/ that they all import; only providers/registry.ts wires the drivers together).
// `npm run check:layers` exits 1 and lists the offences; scripts/check-layers.test.ts runs it on the tree.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

export const ROOTS = ["core", "plugins", "providers"];
/** The only core file allowed to import plugins/ and providers/. */
export const COMPOSITION_ROOT = "core/builtins.ts";
/** Folders of providers/ that are not drivers: the wire codecs drivers share, and the translators. */
export const SHARED_PROVIDER_FOLDERS = ["codecs", "translate"];
/** The only providers file allowed to import every driver: protocol name -> driver factory. */
export const DRIVER_REGISTRY = "providers/registry.ts";

function walk(dir: string, out: string[]): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(p);
  }
}

/** file (relative, '/'-separated) -> the project files it imports (static, type-only, re-exports, import()). */
export function importGraph(root: string): Map<string, string[]> {
  const files: string[] = [];
  for (const r of ROOTS) walk(join(root, r), files);
  const rel = (abs: string) => relative(root, abs).split(sep).join("/");
  const known = new Set(files.map(rel));
  const graph = new Map<string, string[]>();
  for (const abs of files) {
    const info = ts.preProcessFile(readFileSync(abs, "utf8"), true, true);
    const deps: string[] = [];
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith(".")) continue;
      const target = rel(resolve(dirname(abs), fileName));
      if (known.has(target)) deps.push(target);
    }
    graph.set(rel(abs), deps);
  }
  return graph;
}

/** Strongly connected components with more than one file (or a file importing itself): each one a cycle. */
export function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>(), low = new Map<string, number>(), onStack = new Set<string>();
  const stack: string[] = [], out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index); low.set(v, index); index++;
    stack.push(v); onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do { w = stack.pop()!; onStack.delete(w); scc.push(w); } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** The plugin folder a file belongs to (plugins/<name>/...), or undefined. */
const pluginOf = (file: string) => /^plugins\/([^/]+)\//.exec(file)?.[1];

/**
 * The driver folder a file belongs to (providers/<driver>/...), or undefined: codecs/, translate/ and the files at
 * the top of providers/ (http.ts, bearer.ts, batch.ts, …) are what drivers share, not drivers.
 */
const driverOf = (file: string) => {
  const folder = /^providers\/([^/]+)\//.exec(file)?.[1];
  return folder && !SHARED_PROVIDER_FOLDERS.includes(folder) ? folder : undefined;
};

/**
 * "a -> b" for each core file other than the root reaching into plugins/ or providers/, each provider file
 * reaching into plugins/, and each plugin file reaching into another plugin's folder (tests aside: they may wire
 * things together); and for each providers file but the registry, tests included, reaching into another driver's
 * folder (codecs, translators and shared files included: what drivers share never lives in a driver).
 */
export function layerViolations(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [file, deps] of graph) {
    if (file.startsWith("providers/") && file !== DRIVER_REGISTRY) {
      for (const d of deps) if (driverOf(d) && driverOf(d) !== driverOf(file)) out.push(`${file} -> ${d}`);
    }
    if (file.endsWith(".test.ts")) continue;
    if (file.startsWith("core/") && file !== COMPOSITION_ROOT) {
      for (const d of deps) if (d.startsWith("plugins/") || d.startsWith("providers/")) out.push(`${file} -> ${d}`);
    }
    if (file.startsWith("providers/")) for (const d of deps) if (d.startsWith("plugins/")) out.push(`${file} -> ${d}`);
    const own = pluginOf(file);
    if (own) for (const d of deps) if (pluginOf(d) && pluginOf(d) !== own) out.push(`${file} -> ${d}`);
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const graph = importGraph(resolve(import.meta.dirname, ".."));
  const cyc = cycles(graph), bad = layerViolations(graph);
  for (const c of cyc) console.error(`import cycle (${c.length} files): ${c.join(", ")}`);
  for (const b of bad) console.error(`layer violation (core outside ${COMPOSITION_ROOT} -> plugins/providers, provider -> plugins, plugin -> another plugin, or providers file outside ${DRIVER_REGISTRY} -> another driver): ${b}`);
  if (cyc.length || bad.length) process.exit(1);
  console.log(`layers ok: ${graph.size} files, no cycles, core reaches plugins/ and providers/ only via ${COMPOSITION_ROOT}, no plugin imports another, no driver imports another`);
}
