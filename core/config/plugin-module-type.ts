// What to change when a TypeScript plugin failed to load because of its module type. Node names the symptom ("Cannot
// require() ES Module ... in a cycle", "Unexpected token ':'", "require is not defined in ES module scope"), not the
// cause the author can change: whether the file was loaded as CommonJS or as an ES module, and why. A .ts plugin is
// an ES module unless the nearest package.json above it says "type": "commonjs" (bin/plugin-hooks.mjs); a .cts file
// is CommonJS (compiled), a .mts one an ES module. A .ts file loaded as CommonJS is not compiled at all.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const TYPESCRIPT = /\.(?:[cm]?ts|tsx)$/;
const COMMONJS_NAME = /^(?:require|module|exports|__dirname|__filename) is not defined/;

/** The nearest package.json above `dir` and the "type" it names; undefined when there is none. */
export function nearestPackage(dir: string): { path: string; type: unknown } | undefined {
  for (;;) {
    const path = join(dir, "package.json");
    try {
      return { path, type: (JSON.parse(readFileSync(path, "utf8")) as { type?: unknown }).type };
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") return { path, type: undefined }; // unreadable: Node reports it
    }
    if (dirname(dir) === dir) return undefined;
    dir = dirname(dir);
  }
}

/** The hint for a plugin at `url` whose import failed with `err`, or undefined when its module type is not the cause. */
export function moduleTypeHint(url: string, err: unknown): string | undefined {
  if (!url.startsWith("file:")) return undefined;
  const file = fileURLToPath(url);
  if (!TYPESCRIPT.test(file)) return undefined;
  const e = err as { code?: unknown; message?: unknown; name?: unknown } | undefined;
  const message = typeof e?.message === "string" ? e.message : "";
  const cts = file.endsWith(".cts");
  const pkg = cts || file.endsWith(".mts") ? undefined : nearestPackage(dirname(file));
  const commonjs = cts || pkg?.type === "commonjs";
  const why = cts ? "a .cts file is CommonJS" : `${pkg?.path} says "type": "commonjs"`;
  const toModule = cts ? "write it as an ES module named .mts" : `write it as an ES module named .mts, or set "type": "module" in ${pkg?.path}`;
  if (commonjs && e?.code === "ERR_REQUIRE_CYCLE_MODULE") {
    // An ES module (ours: model-gateway/plugin) imported from a plugin loaded as CommonJS.
    if (cts) return "it was loaded as CommonJS (a .cts file is CommonJS): write it as an ES module, named .mts or .mjs";
    return `it was loaded as CommonJS (a package.json above it says "type": "commonjs"): write it as an ES module, named .mts or .mjs, or set "type": "module" in that package.json`;
  }
  if (commonjs && e?.code === "MODULE_NOT_FOUND" && message.includes("'model-gateway/plugin'")) {
    return `it was loaded as CommonJS (${why}), which cannot require model-gateway/plugin (an ES module): ${toModule}, and import it`;
  }
  if (commonjs && !cts && e?.name === "SyntaxError") {
    return `it was loaded as CommonJS (${why}), and a .ts file loaded as CommonJS is not compiled from TypeScript: ${toModule}, or name it .cts to keep it CommonJS`;
  }
  if (!commonjs && e?.name === "ReferenceError" && COMMONJS_NAME.test(message)) {
    const whyModule = file.endsWith(".mts") ? "a .mts file is an ES module" : `a .ts plugin is one unless the package.json above it says "type": "commonjs"`;
    return `it was loaded as an ES module (${whyModule}), where require, module, exports and __dirname do not exist: use import and export default (import.meta.dirname for __dirname), or name it .cts to keep it CommonJS`;
  }
  return undefined;
}
