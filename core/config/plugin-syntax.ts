// Why a compiled plugin (.js, .mjs, .cjs) did not parse. The bin loads plugins through tsx's loader, whose own scanner
// fails first on a JavaScript syntax error with `Parse error <file>:1:1` (no reason, the wrong place), and a .js with
// no package.json above it fails with "Cannot require() ES Module ... in a cycle": neither says "syntax". Such a file
// is parsed again by Node itself (`node --check`, its source on stdin: no loader, nothing run) for its own reason and
// place. Only on that failure path; the parse is bounded.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { nearestPackage } from "./plugin-module-type.ts";

const JAVASCRIPT = /\.[cm]?js$/;
const CHECK_TIMEOUT_MS = 10_000;

/** Failures that may hide a syntax error: tsx's scanner's, and Node's require(esm) of a file that did not parse. */
function mayHideSyntaxError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  return e?.code === "ERR_REQUIRE_CYCLE_MODULE" || (typeof e?.message === "string" && e.message.startsWith("Parse error "));
}

/**
 * `file:line:column: SyntaxError: reason` for a JavaScript plugin at `url` whose import failed with `err` (or, for an
 * untyped .js ES module that parses, what to change); else undefined: the import's own error says it.
 */
export function pluginSyntaxError(url: string, err: unknown): string | undefined {
  if (!url.startsWith("file:") || !mayHideSyntaxError(err)) return undefined;
  const file = fileURLToPath(url);
  if (!JAVASCRIPT.test(file)) return undefined;
  let source: string;
  try {
    source = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const type = file.endsWith(".mjs") ? "module" : file.endsWith(".cjs") ? "commonjs" : nearestPackage(dirname(file))?.type;
  if (type === "module" || type === "commonjs") return nodeCheck(source, type, file);
  // A .js that no package.json types: Node takes it as an ES module when it has import/export. It is one if it parses
  // as one; if it parses as neither, the ES module's reason is given (a CommonJS parse stops at its first `import`).
  const asModule = nodeCheck(source, "module", file);
  if (asModule === undefined) return untypedModule(file, err);
  return nodeCheck(source, "commonjs", file) ? asModule : undefined;
}

/**
 * A .js ES module that parses, with no package.json "type" above it: the loader took it for CommonJS, and Node's
 * require() of an ES module found the cycle. What the author can change.
 */
function untypedModule(file: string, err: unknown): string | undefined {
  if ((err as { code?: unknown } | undefined)?.code !== "ERR_REQUIRE_CYCLE_MODULE") return undefined;
  return `${file} is an ES module (import/export) with no package.json "type" above it, so it was loaded as CommonJS: name it .mjs, or add a package.json with "type": "module" beside it`;
}

/** Node's syntax error for `source` parsed as `type`, placed in `file`; undefined when it parses. */
function nodeCheck(source: string, type: "module" | "commonjs", file: string): string | undefined {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // a loader given there (tsx's) would parse it instead
  const r = spawnSync(process.execPath, [`--input-type=${type}`, "--check"], { input: source, encoding: "utf8", timeout: CHECK_TIMEOUT_MS, env });
  if (r.status === 0 || r.error) return undefined;
  // [stdin]:LINE / the source line / spaces and a caret under the column / ... / SyntaxError: reason
  const at = /^\[stdin\]:(\d+)\r?\n.*\r?\n( *)\^/m.exec(r.stderr);
  const reason = /^SyntaxError: .*$/m.exec(r.stderr)?.[0];
  if (!reason) return undefined;
  return at ? `${file}:${at[1]}:${at[2]!.length + 1}: ${reason}` : `${file}: ${reason}`;
}
