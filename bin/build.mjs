#!/usr/bin/env node
// Bundles the TypeScript sources into dist/ with esbuild, so `model-gateway start` runs plain JavaScript: through tsx
// every module is transformed with keepNames (a __name() call for each closure created per request) and the process
// carries tsx's loader thread (issue 11: ~16% CPU per request, ~50 MB idle RSS). Plain JS, because the bin imports it
// before anything can load TypeScript. `node bin/build.mjs` (npm run build) forces a build.
import { execFile } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { mkdir, readFile, readdir, rename, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

/** This package's root (the directory holding package.json). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The gateway itself: `cli` is the bin's entry, `plugin` the public plugin entry (shares the bundle's classes). */
export const GATEWAY = {
  outdir: "dist",
  entries: { cli: "core/cli.ts", plugin: "core/public/plugin.ts" },
  watch: ["core", "plugins", "providers"],
};

/** Files whose change also makes every bundle stale (besides the watched trees). */
const ALWAYS = ["package.json", "tsconfig.json", "bin/build.mjs"];
/**
 * Outputs of older builds are removed once this old: chunks soon (every rebuild leaves ~3 MB with maps), entries
 * later, as a process still running an older build imports its entry `plugin` lazily (its chunks are loaded already).
 */
const PRUNE_CHUNKS_AFTER_MS = 3600_000;
const PRUNE_ENTRIES_AFTER_MS = 7 * 24 * 3600_000;

/**
 * The bundle for `spec`, built first when missing or stale: any file or directory under `spec.watch`, or package.json,
 * tsconfig.json or this script, is newer than the last build. Returns the absolute path of each entry's output.
 * Outputs have content-hashed names and are each written to a temp file and renamed, and `build.json` (which names
 * them) is written last the same way, so processes building at once (vitest spawning the bin, cluster workers) never
 * read a half-written bundle. The build runs in a child process (`opts.here`: in this one), so a gateway that had
 * to build does not keep esbuild and the build's output buffers (~15 MB of RSS). Throws when the build fails or the
 * output directory is not writable.
 */
export async function ensureBuilt(spec = GATEWAY, root = ROOT, opts = {}) {
  const outdir = resolve(root, spec.outdir);
  const manifest = join(outdir, "build.json");
  const started = Date.now();
  if (!opts.force) {
    const built = await readManifest(manifest);
    if (built && newestMtime(root, [...spec.watch, ...ALWAYS]) <= built.mtimeMs) return paths(outdir, built.entries);
  }
  if (!opts.here) return buildInChild(spec, root);
  const { entries, outputs } = await build(spec, root, outdir);
  const tmp = `${manifest}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, JSON.stringify({ entries }) + "\n");
  // Dated to when the staleness walk began: a source saved while esbuild ran is newer, so the next start rebuilds.
  const at = new Date(started - 1);
  await utimes(tmp, at, at);
  await rename(tmp, manifest);
  await prune(outdir, outputs).catch(() => {});
  return paths(outdir, entries);
}

/**
 * esbuild escapes non-ASCII characters in code but copies the comments it keeps as written, and one em dash in a
 * chunk makes V8 hold that chunk's whole source as a two-byte string: ~1 MB more per gateway process for the main
 * chunk. Each UTF-16 unit outside ASCII (in those comments) becomes one "?", so the source map's columns still match.
 */
export function asciiOnly(bytes) {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  return /[^\x00-\x7f]/.test(text) ? Buffer.from(text.replace(/[^\x00-\x7f]/g, "?"), "utf8") : bytes;
}

/** `node bin/build.mjs --spec JSON --root DIR`, which prints the entries' paths as JSON. */
function buildInChild(spec, root) {
  return new Promise((resolvePaths, reject) => {
    const args = [fileURLToPath(import.meta.url), "--spec", JSON.stringify(spec), "--root", root];
    execFile(process.execPath, args, { encoding: "utf8" }, (err, stdout, stderr) => {
      if (err) reject(new Error(stderr.trim().split("\n")[0] || err.message));
      else resolvePaths(JSON.parse(stdout));
    });
  });
}

async function build(spec, root, outdir) {
  const esbuild = await import("esbuild"); // only when a build is needed: a fresh bundle starts without loading it
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: spec.entries,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    splitting: true, // cli's lazily imported parts, and plugin sharing cli's module instances (GatewayError ...)
    sourcemap: "linked",
    // Maps name the .ts files and lines without embedding their text: with source maps enabled, every process holds
    // its maps in memory (~3 MB less per gateway process), and logged stacks still point at file:line.
    sourcesContent: false,
    outdir,
    entryNames: "[name]-[hash]",
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunk-[hash]",
    write: false,
    metafile: true,
    logLevel: "silent",
  }).finally(() => esbuild.stop()); // else its service process lives as long as the gateway (~75 MB)
  await mkdir(outdir, { recursive: true });
  // Hashed names: a file of the same name always has the same content, so concurrent builds may both rename theirs.
  await Promise.all(result.outputFiles.map(async (f) => {
    const tmp = `${f.path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    await writeFile(tmp, f.path.endsWith(".mjs") ? asciiOnly(f.contents) : f.contents);
    await rename(tmp, f.path);
  }));
  const entries = {};
  for (const [out, meta] of Object.entries(result.metafile.outputs)) {
    if (!meta.entryPoint) continue;
    const name = Object.keys(spec.entries).find((k) => resolve(root, spec.entries[k]) === resolve(root, meta.entryPoint));
    if (name) entries[name] = relative(outdir, resolve(root, out));
  }
  return { entries, outputs: result.outputFiles.map((f) => relative(outdir, f.path)) };
}

async function readManifest(file) {
  try {
    const [text, st] = await Promise.all([readFile(file, "utf8"), stat(file)]);
    return { entries: JSON.parse(text).entries, mtimeMs: st.mtimeMs };
  } catch {
    return undefined;
  }
}

/**
 * Newest mtime of these paths and, for directories, of everything under them (a directory's own mtime changes when a
 * file is added, removed or renamed). Synchronous: ~400 stats take a few ms, several times less than with promises.
 */
function newestMtime(root, rels) {
  let newest = 0;
  const visit = (path) => {
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) return;
    if (st.mtimeMs > newest) newest = st.mtimeMs;
    if (!st.isDirectory()) return;
    for (const n of readdirSync(path)) if (n !== "node_modules" && !n.startsWith(".")) visit(join(path, n));
  };
  for (const r of rels) visit(resolve(root, r));
  return newest;
}

const paths = (outdir, entries) => Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, join(outdir, v)]));

/** Remove outputs of older builds (and temp files of crashed ones) that are old enough. */
async function prune(outdir, outputs) {
  const keep = new Set(outputs);
  const now = Date.now();
  for (const name of await readdir(outdir)) {
    if (keep.has(name) || !/\.(mjs|map|tmp)$/.test(name)) continue;
    const file = join(outdir, name);
    const st = await stat(file).catch(() => undefined);
    const after = name.startsWith("chunk-") || name.endsWith(".map") || name.endsWith(".tmp") ? PRUNE_CHUNKS_AFTER_MS : PRUNE_ENTRIES_AFTER_MS;
    if (st?.isFile() && now - st.mtimeMs > after) await unlink(file).catch(() => {});
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { spec: { type: "string" }, root: { type: "string" } } });
  const t = performance.now();
  try {
    const out = await ensureBuilt(values.spec ? JSON.parse(values.spec) : GATEWAY, values.root ?? ROOT, { force: true, here: true });
    if (values.spec) process.stdout.write(JSON.stringify(out)); // for buildInChild
    else process.stdout.write(`built ${Object.values(out).map((f) => relative(process.cwd(), f)).join(", ")} in ${Math.round(performance.now() - t)} ms\n`);
  } catch (err) {
    process.stderr.write(`${String(err?.message ?? err).replace(/\s*\n\s*/g, " ")}\n`); // one line: the bin's warning
    process.exitCode = 1;
  }
}
