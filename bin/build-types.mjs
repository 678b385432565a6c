// The .d.ts files of the public entries (package.json "exports" `types`), so a plugin written in TypeScript checks
// against declarations, never against the gateway's .ts sources: those would be compiled with the plugin's own
// settings and bring in server-only modules (better-sqlite3, ...) and the built-in plugins' context fields. Emitted
// by the TypeScript compiler (a devDependency: `npm run build` and `npm pack` run this, `model-gateway start` does
// not) for the files the entries reach, with `.ts` import specifiers rewritten to `.js`, which resolve to the `.d.ts`
// files beside them under any moduleResolution.
import { mkdir, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";

/** Specifiers a declaration may import besides its siblings: Node's built-ins and these dependencies' own types. */
const EXTERNAL_TYPES = ["pino", "prom-client"];

/**
 * Emit the declarations of `entries` (paths relative to `root`) under `outdir`, mirroring the source tree
 * (core/public/plugin.ts -> OUTDIR/core/public/plugin.d.ts). Throws with the compiler's messages when the emit fails
 * or a declaration imports a package a plugin would not have (see EXTERNAL_TYPES).
 */
export async function buildTypes(root, entries, outdir) {
  const ts = (await import("typescript")).default;
  const options = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    resolveJsonModule: true,
    declaration: true,
    emitDeclarationOnly: true,
    noEmit: false,
    types: ["node"],
    typeRoots: [join(root, "node_modules", "@types")],
    lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
    rootDir: root,
    outDir: outdir,
  };
  const program = ts.createProgram(entries.map((e) => resolve(root, e)), options);
  // The program holds every file the entries' code reaches (the whole server, for testing.ts); emit and ship only the
  // declarations the entries' declarations reach, file by file from the entries.
  const files = new Map();
  const problems = [];
  const queue = entries.map((e) => resolve(root, e));
  for (const source of queue) {
    const out = resolve(outdir, relative(root, source)).replace(/\.ts$/, ".d.ts");
    if (files.has(out)) continue;
    const sf = program.getSourceFile(source);
    if (!sf) throw new Error(`type declarations: ${relative(root, source)} is not part of the program`);
    let text;
    const result = program.emit(sf, (_file, t) => (text = rewriteSpecifiers(t)), undefined, true);
    problems.push(...result.diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error));
    if (text === undefined) throw new Error(`type declarations: ${relative(root, source)} was not emitted`);
    files.set(out, text);
    for (const m of text.matchAll(/(?:from|import\()\s*"(\.{1,2}\/[^"]*)\.js"/g)) queue.push(resolve(dirname(source), `${m[1]}.ts`));
  }
  if (problems.length) throw new Error(`type declarations: ${ts.formatDiagnostics(problems.slice(0, 5), host(ts, root))}`);
  for (const [file, text] of files) {
    const bad = [...text.matchAll(/(?:from|import\()\s*"([^".][^"]*)"/g)].map((m) => m[1]).filter((s) => !allowedExternal(s));
    if (bad.length) throw new Error(`type declarations: ${relative(root, file)} imports ${bad.join(", ")}, which a plugin does not install`);
  }
  await rm(outdir, { recursive: true, force: true });
  for (const [file, text] of files) {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
  }
  return [...files.keys()].map((f) => relative(root, f));
}

/** `from "./x.ts"` -> `from "./x.js"` (and `import("./x.ts")`), for relative specifiers only. */
export function rewriteSpecifiers(text) {
  return text.replace(/((?:from|import\()\s*"\.{1,2}\/[^"]*)\.ts"/g, '$1.js"');
}

function allowedExternal(specifier) {
  if (specifier.startsWith("node:")) return true;
  const name = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0];
  return EXTERNAL_TYPES.includes(name);
}

const host = (ts, root) => ({ getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => ts.sys.newLine });

export const TYPES_DIR = join("dist", "types");
