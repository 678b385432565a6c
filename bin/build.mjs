#!/usr/bin/env node
// Bundles the TypeScript sources into dist/ with esbuild, so `model-gateway start` runs plain JavaScript: through tsx
// every module is transformed with keepNames (a __name() call for each closure created per request) and the process
// carries tsx's loader thread (issue 11: ~16% CPU per request, ~50 MB idle RSS). Plain JS, because the bin imports it
// before anything can load TypeScript. `node bin/build.mjs` (npm run build) forces a build.
import { execFile } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { mkdir, readFile, readdir, rename, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

/** This package's root (the directory holding package.json). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The gateway itself: `cli` is the bin's entry; `plugin` and `testing` are the public entries (package.json
 * "exports"), which share the bundle's modules (GatewayError ...). A public entry also gets a stable name, dist/NAME.mjs
 * re-exporting the hashed file, for "exports" to point at, and declarations under dist/types/ (bin/build-types.mjs).
 */
export const GATEWAY = {
  outdir: "dist",
  entries: { cli: "core/cli.ts", plugin: "core/public/plugin.ts", testing: "core/public/testing.ts" },
  public: ["plugin", "testing"],
  watch: ["core", "plugins", "providers"],
};

/**
 * The operator console (docs/console.md): a browser bundle (Preact and uPlot, with its CSS) that the gateway serves
 * under console.path with long-cache hashed names. Built with the gateway (npm run build, prepare, prepack) and, in a
 * checkout, on the first console request when a file under console/ is newer (core/console/bundle.ts).
 */
export const CONSOLE = {
  outdir: "dist/console",
  entries: { console: "console/main.tsx" },
  watch: ["console"],
  browser: true,
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
    const fresh = built && complete(outdir, spec, built.entries) && (installedRelease(built, root) || (!fromTheFuture(built.mtimeMs) && newestMtime(root, [...spec.watch, ...ALWAYS]) <= built.mtimeMs));
    if (fresh) return paths(outdir, built.entries);
  }
  if (!opts.here) return buildInChild(spec, root);
  const { entries, outputs } = await build(spec, root, outdir);
  for (const name of spec.public ?? []) {
    const stable = `${name}.mjs`;
    await writeAtomically(join(outdir, stable), `export * from "./${entries[name]}";\n`);
    outputs.push(stable);
  }
  const tmp = `${manifest}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, JSON.stringify(opts.clean ? { entries, release: true } : { entries }) + "\n");
  // Dated to when the staleness walk began: a source saved while esbuild ran is newer, so the next start rebuilds.
  const at = new Date(started - 1);
  await utimes(tmp, at, at);
  await rename(tmp, manifest);
  await prune(outdir, outputs, opts.clean ? 0 : undefined).catch((err) => {
    if (opts.clean) throw err;
  });
  return paths(outdir, entries);
}

/**
 * A bundle built for the package (`npm pack`) in a copy npm installed: its sources never change there, and their
 * mtimes say nothing (npm extracts every file at the time of the install, dist/ before the sources), so the bundle is
 * used as it is, even where node_modules is read-only. A checkout keeps comparing mtimes, release build or not.
 */
function installedRelease(built, root) {
  return built.release === true && resolve(root).split(sep).includes("node_modules");
}

/** Every output the manifest names, and each public entry's stable file, is there. */
function complete(outdir, spec, entries) {
  const names = [...Object.values(entries), ...(spec.public ?? []).map((n) => `${n}.mjs`)];
  return names.every((n) => statSync(join(outdir, n), { throwIfNoEntry: false }));
}

async function writeAtomically(file, text) {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
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

/** esbuild options of a Node bundle (the gateway) and of a browser one (the console). */
function targetOptions(spec) {
  if (spec.browser) {
    return {
      platform: "browser",
      format: "esm",
      // Browsers of the last two years or so: ES2022 classes and optional chaining as written.
      target: ["chrome110", "firefox115", "safari16"],
      minify: true,
      jsx: "automatic",
      jsxImportSource: "preact",
      // Everything in one file per entry (and its CSS beside it): the page loads two assets, both immutable.
      splitting: false,
      sourcemap: false,
    };
  }
  return {
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    splitting: true, // cli's lazily imported parts, and plugin sharing cli's module instances (GatewayError ...)
    sourcemap: "linked",
    // Maps name the .ts files and lines without embedding their text: with source maps enabled, every process holds
    // its maps in memory (~3 MB less per gateway process), and logged stacks still point at file:line.
    sourcesContent: false,
    outExtension: { ".js": ".mjs" },
  };
}

async function build(spec, root, outdir) {
  const esbuild = await import("esbuild"); // only when a build is needed: a fresh bundle starts without loading it
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: spec.entries,
    bundle: true,
    ...targetOptions(spec),
    outdir,
    entryNames: "[name]-[hash]",
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
    if (!name) continue;
    entries[name] = relative(outdir, resolve(root, out));
    // A browser entry's imported CSS, bundled beside it.
    if (meta.cssBundle) entries[`${name}.css`] = relative(outdir, resolve(root, meta.cssBundle));
  }
  return { entries, outputs: result.outputFiles.map((f) => relative(outdir, f.path)) };
}

/**
 * A stamp dated after now (a clock that was set back, a file copied from a machine ahead of this one) would make
 * every later edit look older than the bundle until the clock caught up: such a bundle is built again.
 */
function fromTheFuture(mtimeMs) {
  return mtimeMs > Date.now() + 1000;
}

async function readManifest(file) {
  try {
    const [text, st] = await Promise.all([readFile(file, "utf8"), stat(file)]);
    const { entries, release } = JSON.parse(text);
    return { entries, release, mtimeMs: st.mtimeMs };
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

/**
 * Remove outputs of older builds (and temp files of crashed ones) that are old enough; with `maxAgeMs` 0 (a build
 * for `npm pack`), every one of them, so the package holds this build only.
 */
async function prune(outdir, outputs, maxAgeMs) {
  const keep = new Set(outputs);
  const now = Date.now();
  for (const name of await readdir(outdir)) {
    if (keep.has(name) || !/\.(mjs|js|css|map|tmp)$/.test(name)) continue;
    const file = join(outdir, name);
    const st = await stat(file).catch(() => undefined);
    const after = maxAgeMs ?? (name.startsWith("chunk-") || name.endsWith(".map") || name.endsWith(".tmp") ? PRUNE_CHUNKS_AFTER_MS : PRUNE_ENTRIES_AFTER_MS);
    if (st?.isFile() && now - st.mtimeMs >= after) {
      if (maxAgeMs === 0) await unlink(file);
      else await unlink(file).catch(() => {});
    }
  }
}

/**
 * The public entries' declarations (dist/types/, bin/build-types.mjs), when missing or older than a file under core/
 * (or package.json ...), or always with `opts.force`. Needs the typescript package (a devDependency): without it,
 * says so and skips unless `opts.required`. Returns the number of files written, 0 when fresh or skipped.
 */
export async function ensureTypes(root = ROOT, opts = {}) {
  const outdir = resolve(root, GATEWAY.outdir, "types");
  const stamp = join(outdir, "build.stamp");
  const started = Date.now();
  const built = statSync(stamp, { throwIfNoEntry: false });
  if (!opts.force && built && !fromTheFuture(built.mtimeMs) && newestMtime(root, ["core", "bin/build-types.mjs", ...ALWAYS]) <= built.mtimeMs) return 0;
  const { buildTypes } = await import("./build-types.mjs");
  let files;
  try {
    files = await buildTypes(root, GATEWAY.public.map((n) => GATEWAY.entries[n]), outdir);
  } catch (err) {
    if (opts.required || !(err?.code === "ERR_MODULE_NOT_FOUND" && /typescript/.test(err.message))) throw err;
    process.stderr.write("model-gateway build: the typescript package is not installed; skipped the type declarations (dist/types)\n");
    return 0;
  }
  await writeFile(stamp, "");
  const at = new Date(started - 1);
  await utimes(stamp, at, at);
  return files.length;
}

// `node bin/build.mjs`: the bundle and the declarations, built anew (npm run build). `--if-stale`: only what is
// stale, and the declarations only when typescript is installed (npm's prepare, on `npm install` in a checkout).
// `--clean`: also delete every output of older builds (npm's prepack: the package holds this build only).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { spec: { type: "string" }, root: { type: "string" }, clean: { type: "boolean" }, "if-stale": { type: "boolean" } } });
  const t = performance.now();
  try {
    if (values.spec) {
      process.stdout.write(JSON.stringify(await ensureBuilt(JSON.parse(values.spec), values.root ?? ROOT, { force: true, here: true }))); // for buildInChild
    } else {
      const root = values.root ?? ROOT;
      const lazy = values["if-stale"] && !values.clean;
      const out = await ensureBuilt(GATEWAY, root, { force: !lazy, here: true, clean: values.clean });
      const ui = await ensureBuilt(CONSOLE, root, { force: !lazy, here: true, clean: values.clean });
      const types = await ensureTypes(root, { force: !lazy, required: !lazy });
      const what = [...Object.values(out), ...Object.values(ui)].map((f) => relative(process.cwd(), f)).join(", ") + (types ? ` and ${types} declaration files in ${relative(process.cwd(), join(root, GATEWAY.outdir, "types"))}` : "");
      // stderr: run as npm's prepack, stdout would land in `npm pack --json`.
      process.stderr.write(`built ${what} in ${Math.round(performance.now() - t)} ms\n`);
    }
  } catch (err) {
    process.stderr.write(`${String(err?.message ?? err).replace(/\s*\n\s*/g, " ")}\n`); // one line: the bin's warning
    process.exitCode = 1;
  }
}
