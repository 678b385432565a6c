// Module hooks for third-party plugins run by the gateway's bin (registered by bin/model-gateway.mjs before the first
// plugin import). `model-gateway/plugin` resolves to the running gateway's own public entry, from whatever folder the
// plugin lives in: a plugin symlinked from outside the gateway's folder (`npm install ../my-plugin`, a workspace)
// finds no model-gateway of its own, and one with its own copy (its devDependency) would get that copy's
// GatewayError, another class than the gateway's (its 403 a 500). Bundle files load as they are, without tsx.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let entry, dist;

export function initialize(data) {
  ({ entry, dist } = data);
}

export async function resolve(specifier, context, next) {
  // Resolved down the chain (tsx's resolver marks the .ts entry of a gateway run from its sources for its loader).
  if (specifier === "model-gateway/plugin") return next(entry, context);
  const resolved = await next(specifier, context);
  // A TypeScript file is an ES module unless its package says `"type": "commonjs"`. tsx, like Node, takes a .ts file
  // whose folder has no package.json, or one that names no type, for CommonJS: a plugin written as the docs show
  // (`import { definePlugin } from "model-gateway/plugin"`) then failed to load ("Cannot require() ES Module ... in
  // a cycle") unless a package.json with "type": "module" was beside it.
  if (resolved.format === "commonjs" && resolved.url.startsWith("file:")) {
    const file = fileURLToPath(new URL(resolved.url).href.replace(/[?#].*$/, ""));
    if (TYPESCRIPT.test(file) && declaredType(dirname(file)) !== "commonjs") return { ...resolved, format: "module" };
  }
  return resolved;
}

export async function load(url, context, next) {
  if (!dist || !url.startsWith(dist)) return next(url, context);
  return { format: "module", source: await readFile(new URL(url)), shortCircuit: true };
}

const TYPESCRIPT = /\.tsx?$/;
const typeOfDir = new Map();

/** The "type" of the nearest package.json above `dir`, undefined when it names none or there is none. */
function declaredType(dir) {
  if (typeOfDir.has(dir)) return typeOfDir.get(dir);
  let type;
  try {
    type = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).type ?? null;
  } catch (err) {
    // No package.json here (or an unreadable one, which Node's own loader reports): the parent's scope.
    type = err?.code === "ENOENT" || err?.code === "ENOTDIR" ? (dirname(dir) === dir ? null : declaredType(dirname(dir))) : null;
  }
  typeOfDir.set(dir, type);
  return type ?? undefined;
}
