// The files a JavaScript file imports by a relative path (`import ... from "./util.js"`, `export ... from`, a bare
// `import "./x.js"`, `import("./x.js")`, `require("./x.js")`), as absolute paths. Read from the text, not parsed: the
// file may not parse. Used to find which file of a plugin's package holds a syntax error (./plugin-syntax.ts).
import { resolve, dirname } from "node:path";

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(["'])(\.{1,2}\/[^"'\n]*)\1/g;

/** The relative specifiers of `source`, resolved against `file`'s folder, in the order they appear. */
export function relativeImports(source: string, file: string): string[] {
  const dir = dirname(file);
  return [...source.matchAll(SPECIFIER)].map((m) => resolve(dir, m[2]!));
}
