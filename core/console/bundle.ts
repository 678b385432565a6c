// The console's files as served: the browser bundle bin/build.mjs makes in dist/console (its script and its CSS,
// content-hashed names), built first when missing or older than a file under console/ (a checkout; an installed
// package ships it built), then read into memory once, with a gzipped copy: a few tens of KB per process.
import { readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { settleWithin } from "../deadline.ts";
import { packageRoot } from "../package-root.ts";

export interface ConsoleAsset {
  type: string;
  body: Buffer;
  gzip: Buffer;
}

export interface ConsoleBundle {
  /** Hashed file names (under <path>/assets/) of the entry script and its stylesheet. */
  script: string;
  style: string;
  assets: Map<string, ConsoleAsset>;
}

/** A build (esbuild in a child process) takes a second or two; past this the request gets a 503. */
const BUILD_TIMEOUT_MS = 60_000;
/** A failed build is tried again on a request at least this much later, not on every request. */
const RETRY_AFTER_MS = 30_000;

const TYPES: Record<string, string> = { js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8" };

type Build = (spec: unknown, root: string) => Promise<Record<string, string>>;

async function load(): Promise<ConsoleBundle> {
  const root = packageRoot();
  const build = (await import(pathToFileURL(join(root, "bin/build.mjs")).href)) as { ensureBuilt: Build; CONSOLE: unknown };
  const built = await settleWithin(build.ensureBuilt(build.CONSOLE, root), BUILD_TIMEOUT_MS, () => {
    throw new Error(`building the console took over ${BUILD_TIMEOUT_MS / 1000} s`);
  });
  const assets = new Map<string, ConsoleAsset>();
  for (const file of Object.values(built)) {
    const body = await readFile(file);
    const ext = file.slice(file.lastIndexOf(".") + 1);
    assets.set(basename(file), { type: TYPES[ext] ?? "application/octet-stream", body, gzip: gzipSync(body, { level: 9 }) });
  }
  if (!built.console || !built["console.css"]) throw new Error("the console bundle has no script or no stylesheet");
  return { script: basename(built.console), style: basename(built["console.css"]), assets };
}

let loading: { at: number; failed: boolean; bundle: Promise<ConsoleBundle> } | undefined;

/** The bundle, loaded (and built, when needed) once per process; a failure is retried after RETRY_AFTER_MS. */
export function consoleBundle(): Promise<ConsoleBundle> {
  if (!loading || (loading.failed && Date.now() - loading.at >= RETRY_AFTER_MS)) {
    const entry = { at: Date.now(), failed: false, bundle: load() };
    entry.bundle.catch(() => {
      entry.failed = true;
    });
    loading = entry;
  }
  return loading.bundle;
}
