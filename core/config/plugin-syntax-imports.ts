// The files a JavaScript file imports by a relative path (`import ... from "./util.js"`, `export ... from`, a bare
// `import "./x.js"`, `import("./x.js")`, `require("./x.js")`), as absolute paths. Read from the text, not parsed: the
// file may not parse. Used to find which file of a plugin's package holds a syntax error (./plugin-syntax.ts).
// A specifier without its extension (`./util`, which the tsx loader and require() resolve) is the file the loader
// would find: util.js, .mjs, .cjs, or util/index.*; it was dropped, so that file's error had no place.
import { statSync } from "node:fs";
import { resolve, dirname, join } from "node:path";

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(["'])(\.{1,2}\/[^"'\n]*)\1/g;

/** The relative specifiers of `source`, resolved against `file`'s folder, in the order they appear. */
export function relativeImports(source: string, file: string): string[] {
  const dir = dirname(file);
  return [...source.matchAll(SPECIFIER)].map((m) => withExtension(resolve(dir, m[2]!)));
}

const JAVASCRIPT = /\.[cm]?js$/;
const EXTENSIONS = [".js", ".mjs", ".cjs"];

/** `path` as the loader finds it when it names no JavaScript file: the first of path.js/.mjs/.cjs, path/index.* that exists. */
function withExtension(path: string): string {
  if (JAVASCRIPT.test(path) && isFile(path)) return path;
  const candidates = [...EXTENSIONS.map((ext) => path + ext), ...EXTENSIONS.map((ext) => join(path, `index${ext}`))];
  return candidates.find(isFile) ?? path;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
