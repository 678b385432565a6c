// Where `import "<package>[/subpath]"` written in gateway.yaml's folder would land: a plugin named by package is
// imported as an ES module, so its `exports` are read with the conditions of an import ("node", "import",
// "default"), not those of require() ("require"), which a package exporting only `import` does not have. Node's own
// resolver takes no parent in Node 20 without a flag (import.meta.resolve(spec, parent)), hence this one: Node's
// PACKAGE_RESOLVE algorithm (self-reference, node_modules walk, exports with conditions and "*" patterns), and
// require.resolve for a package without `exports` (its "main", index.js).
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve, sep } from "node:path";

const CONDITIONS = ["node", "import", "default"];

/** An error with Node's code, so a caller can tell "not installed" from "installed but not exported". */
function fail(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** The file `import(spec)` would load when written in a module of directory `dir`. */
export function resolvePackageImport(spec: string, dir: string): string {
  const parts = spec.split("/");
  const nameLength = spec.startsWith("@") ? 2 : 1;
  const name = parts.slice(0, nameLength).join("/");
  if (!name || parts.length < nameLength || parts.some((p) => p === "")) throw fail("ERR_INVALID_MODULE_SPECIFIER", `"${spec}" is not a package name`);
  const subpath = ["."].concat(parts.slice(nameLength)).join("/");

  const found = findPackage(name, dir);
  if (!found) {
    throw fail("ERR_MODULE_NOT_FOUND", `package "${name}" is not installed in ${join(dir, "node_modules")} or a parent folder's node_modules (npm install it next to gateway.yaml)`);
  }
  const { root, manifest } = found;
  if (manifest.exports === undefined || manifest.exports === null) {
    return createRequire(join(root, "package.json")).resolve(subpath === "." ? root : join(root, subpath));
  }
  const target = exportsTarget(manifest.exports, subpath);
  if (target === undefined || target === null) {
    throw fail("ERR_PACKAGE_PATH_NOT_EXPORTED", `${subpath === "." ? "the package root" : `subpath "${subpath}"`} is not exported for import by ${join(root, "package.json")} ("exports" has no match with conditions ${CONDITIONS.join(", ")})`);
  }
  const file = resolve(root, target);
  if (!file.startsWith(root + sep)) throw fail("ERR_INVALID_PACKAGE_TARGET", `"exports" target ${target} of ${join(root, "package.json")} leaves the package`);
  if (!existsSync(file)) {
    throw fail("ERR_MODULE_NOT_FOUND", `${join(root, "package.json")} exports ${subpath} as ${target}, which does not exist (is the package built?)`);
  }
  return file;
}

interface Manifest {
  name?: unknown;
  exports?: unknown;
}

/** The package `name` as seen from `dir`: the enclosing package itself when it has that name, else node_modules. */
function findPackage(name: string, dir: string): { root: string; manifest: Manifest } | undefined {
  for (let d = resolve(dir); ; d = dirname(d)) {
    const own = readManifest(join(d, "package.json"));
    if (own) {
      // Self-reference applies to the nearest package.json only, and only through its `exports`.
      if (own.name === name && own.exports !== undefined) return { root: realpathSync(d), manifest: own };
      break;
    }
    if (dirname(d) === d) break;
  }
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (!d.endsWith(`${sep}node_modules`)) {
      const candidate = join(d, "node_modules", name);
      const manifest = readManifest(join(candidate, "package.json"));
      if (manifest) return { root: realpathSync(candidate), manifest };
      if (existsSync(candidate)) return { root: realpathSync(candidate), manifest: {} }; // a folder without package.json
    }
    if (dirname(d) === d) return undefined;
  }
}

function readManifest(file: string): Manifest | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  try {
    const m = JSON.parse(text);
    return m && typeof m === "object" ? m : {};
  } catch (err) {
    throw fail("ERR_INVALID_PACKAGE_CONFIG", `${file} is not valid JSON: ${(err as Error).message}`);
  }
}

/** The relative target `exports` maps `subpath` to under the import conditions; null when excluded, else undefined. */
export function exportsTarget(exports: unknown, subpath: string): string | null | undefined {
  const isSubpathMap = typeof exports === "object" && exports !== null && !Array.isArray(exports) && Object.keys(exports).some((k) => k.startsWith("."));
  if (!isSubpathMap) return subpath === "." ? target(exports, undefined) : undefined;
  const map = exports as Record<string, unknown>;
  if (Object.hasOwn(map, subpath) && !subpath.includes("*")) return target(map[subpath], undefined);
  // Patterns ("./features/*.js"): the key with the longest prefix before its "*" wins, then the longest key.
  let best: { key: string; match: string } | undefined;
  for (const key of Object.keys(map)) {
    const star = key.indexOf("*");
    if (star < 0 || key.indexOf("*", star + 1) >= 0) continue;
    const base = key.slice(0, star), trailer = key.slice(star + 1);
    if (!subpath.startsWith(base) || subpath === base || !subpath.endsWith(trailer) || subpath.length < key.length) continue;
    if (!best || patternOrder(key, best.key) < 0) best = { key, match: subpath.slice(base.length, subpath.length - trailer.length) };
  }
  return best ? target(map[best.key], best.match) : undefined;
}

/** Node's PATTERN_KEY_COMPARE: negative when `a` is the more specific pattern. */
function patternOrder(a: string, b: string): number {
  const baseA = a.indexOf("*"), baseB = b.indexOf("*");
  if (baseA !== baseB) return baseB - baseA;
  return b.length - a.length;
}

/** Node's PACKAGE_TARGET_RESOLVE: a path, null (excluded on purpose), or undefined (no condition matched). */
function target(t: unknown, match: string | undefined): string | null | undefined {
  if (typeof t === "string") {
    if (!t.startsWith("./")) return undefined; // a bare or absolute target is invalid in "exports"
    return match === undefined ? t : t.replaceAll("*", match);
  }
  if (t === null) return null;
  if (Array.isArray(t)) {
    for (const alt of t) {
      const r = target(alt, match);
      if (r !== undefined) return r;
    }
    return null;
  }
  if (typeof t === "object") {
    for (const [condition, value] of Object.entries(t)) {
      if (!CONDITIONS.includes(condition)) continue;
      const r = target(value, match);
      if (r !== undefined) return r;
    }
  }
  return undefined;
}
