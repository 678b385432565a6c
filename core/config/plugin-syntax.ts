// Why a compiled plugin (.js, .mjs, .cjs) did not parse. The bin loads plugins through tsx's loader, whose own scanner
// fails first on a JavaScript syntax error with `Parse error <file>:1:1` (no reason, the wrong place); a .js with no
// package.json above it fails with "Cannot require() ES Module ... in a cycle"; and where Node parses the file itself
// (a .cjs, a file with no import) its SyntaxError says the reason but, for an ES module, neither file nor line. The
// file at fault (the one tsx names, the one Node's stack names, else the entry and the files it imports) is parsed
// again by Node itself (./plugin-syntax-check.ts) for its own reason and place. Only on that failure path.
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { nearestPackage } from "./plugin-module-type.ts";
import { nodeCheck } from "./plugin-syntax-check.ts";
import { relativeImports } from "./plugin-syntax-imports.ts";

const JAVASCRIPT = /\.[cm]?js$/;
/** How many files of a plugin's import graph are parsed again, at most, looking for the one that does not. */
const MAX_FILES = 20;

/** Failures that may hide a syntax error: tsx's scanner's, Node's require(esm) of a file that did not parse, Node's own. */
function mayHideSyntaxError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; name?: unknown } | undefined;
  return e?.code === "ERR_REQUIRE_CYCLE_MODULE" || e?.name === "SyntaxError" || (typeof e?.message === "string" && e.message.startsWith("Parse error "));
}

/**
 * `file:line:column: SyntaxError: reason` for a plugin at `url` whose import failed with `err`, naming the file of
 * its package that does not parse (or, for an untyped .js ES module that parses, what to change); else undefined: the
 * import's own error says it.
 */
export async function pluginSyntaxError(url: string, err: unknown): Promise<string | undefined> {
  if (!url.startsWith("file:") || !mayHideSyntaxError(err)) return undefined;
  const entry = fileURLToPath(url);
  const e = err as { message?: unknown; stack?: unknown; name?: unknown };
  // Node's CommonJS parse puts the place in the stack's first lines: `file:LINE`, the source line, a caret. (A .ts
  // file there is one loaded as CommonJS, uncompiled: ./plugin-module-type.ts says why.)
  const stackAt = typeof e.stack === "string" && e.name === "SyntaxError" ? /^(.+):(\d+)\r?\n.*\r?\n( *)\^/.exec(e.stack) : null;
  if (stackAt && JAVASCRIPT.test(stackAt[1]!)) return `${stackAt[1]}:${stackAt[2]}:${stackAt[3]!.length + 1}: SyntaxError: ${String(e.message)}`;
  // tsx's scanner names the file it could not scan (the entry, or a file it imports), at 1:1 whatever the place.
  const named = typeof e.message === "string" ? /^Parse error (.+):\d+:\d+$/.exec(e.message)?.[1] : undefined;
  if (named && JAVASCRIPT.test(named)) {
    const found = await check(named, err);
    if (found !== undefined) return found;
  }
  if (!JAVASCRIPT.test(entry)) return undefined;
  return searchImports(entry, err);
}

/** The entry, then the files it imports (breadth first, relative specifiers only, MAX_FILES at most): the first that does not parse. */
async function searchImports(entry: string, err: unknown): Promise<string | undefined> {
  const seen = new Set([entry]);
  const queue = [entry];
  for (let i = 0; i < queue.length && i < MAX_FILES; i++) {
    const file = queue[i]!;
    const found = await check(file, file === entry ? err : undefined);
    if (found !== undefined) return found;
    let source: string;
    try {
      source = await readFile(file, "utf8");
    } catch {
      continue;
    }
    for (const next of relativeImports(source, file)) {
      if (!seen.has(next) && JAVASCRIPT.test(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return undefined;
}

/** Node's syntax error for one file, typed as Node types it; `err` (the entry's) for an untyped .js ES module that parses. */
async function check(file: string, err: unknown): Promise<string | undefined> {
  let source: string;
  try {
    source = await readFile(file, "utf8");
  } catch {
    return undefined;
  }
  const type = file.endsWith(".mjs") ? "module" : file.endsWith(".cjs") ? "commonjs" : nearestPackage(dirname(file))?.type;
  if (type === "module" || type === "commonjs") return nodeCheck(source, type, file);
  // A .js that no package.json types: Node takes it as an ES module when it has import/export. It is one if it parses
  // as one; if it parses as neither, the ES module's reason is given (a CommonJS parse stops at its first `import`).
  const asModule = await nodeCheck(source, "module", file);
  if (asModule === undefined) return err === undefined ? undefined : untypedModule(file, err);
  return (await nodeCheck(source, "commonjs", file)) ? asModule : undefined;
}

/**
 * A .js ES module that parses, with no package.json "type" above it: the loader took it for CommonJS, and Node's
 * require() of an ES module found the cycle. What the author can change.
 */
function untypedModule(file: string, err: unknown): string | undefined {
  if ((err as { code?: unknown } | undefined)?.code !== "ERR_REQUIRE_CYCLE_MODULE") return undefined;
  return `${file} is an ES module (import/export) with no package.json "type" above it, so it was loaded as CommonJS: name it .mjs, or add a package.json with "type": "module" beside it`;
}
