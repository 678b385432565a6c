// A compiled JavaScript plugin with a syntax error (the shape docs/plugins.md recommends publishing): `check` (the real
// bin, whose tsx loader scans plugins first) says Node's own reason and where, as a .ts plugin's error does. Before:
// "Parse error <file>:1:1" for .mjs and for a package's .js, and "Cannot require() ES Module ... in a cycle" for a .js
// with no package.json: no reason, no line.
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const BIN = resolve("bin/model-gateway.mjs");
const BROKEN = `import { definePlugin } from "model-gateway/plugin";\n\nexport default definePlugin({ name: "x", async handle(ctx, next) { await next( } });\n`;
const COLUMN = BROKEN.split("\n")[2]!.indexOf("}") + 1;

/** `check` of a gateway.yaml loading plugin x from `module`, with `files` written under a fresh folder. */
function check(module: string, files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), "mg-plugin-syntax-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  const config = join(dir, "gateway.yaml");
  writeFileSync(config, `store: { kind: memory }\nplugins:\n  x: { module: ${module} }\npipeline: [auth, x, router]\n`);
  const r = spawnSync(process.execPath, [BIN, "check", config], { encoding: "utf8", env: { ...process.env, LOG_LEVEL: "silent" }, timeout: 60_000 });
  return { status: r.status, out: r.stdout + r.stderr, dir };
}

describe("a compiled plugin that does not parse", () => {
  it(".mjs by path: Node's reason at its line and column", () => {
    const r = check("./syntax.mjs", { "syntax.mjs": BROKEN });
    expect(r.status).toBe(1);
    expect(r.out).toContain(`cannot load plugin "x" from ./syntax.mjs: ${join(r.dir, "syntax.mjs")}:3:${COLUMN}: SyntaxError: Unexpected token '}'`);
  });

  it(".js with no package.json above it: the same, not a require cycle", () => {
    const r = check("./syntax.js", { "syntax.js": BROKEN });
    expect(r.status).toBe(1);
    expect(r.out).toContain(`${join(r.dir, "syntax.js")}:3:${COLUMN}: SyntaxError: Unexpected token '}'`);
    expect(r.out).not.toContain("cycle");
  });

  it("an installed package's dist/index.js (\"type\": \"module\"), loaded by name", () => {
    const r = check("brokenpkg", {
      "node_modules/brokenpkg/package.json": JSON.stringify({ name: "brokenpkg", type: "module", exports: { ".": { import: "./dist/index.js" } } }),
      "node_modules/brokenpkg/dist/index.js": BROKEN,
    });
    expect(r.status).toBe(1);
    expect(r.out).toContain(`${join(r.dir, "node_modules/brokenpkg/dist/index.js")}:3:${COLUMN}: SyntaxError: Unexpected token '}'`);
  });

  it("a package whose entry parses but a file it imports does not: that file, at its line", () => {
    const pkg = JSON.stringify({ name: "nestpkg", type: "module", exports: { ".": { import: "./dist/index.js" } } });
    const entry = `import { helper } from "./util.js";\nexport default { name: "x", async handle(ctx, next) { helper(); await next(); } };\n`;
    const util = `export function helper() {\n  return 1;\n  if (x) { ]\n}\n`;
    // With an import, tsx's scanner fails first ("Parse error .../util.js:1:1"); without one, Node's own SyntaxError
    // names no file.
    for (const head of ["import { join } from \"node:path\";\n", ""]) {
      const r = check("nestpkg", { "node_modules/nestpkg/package.json": pkg, "node_modules/nestpkg/dist/index.js": entry, "node_modules/nestpkg/dist/util.js": head + util });
      expect(r.status).toBe(1);
      expect(r.out).toContain(`${join(r.dir, "node_modules/nestpkg/dist/util.js")}:${head ? 4 : 3}:12: SyntaxError: Unexpected token ']'`);
    }
  });

  it("a file imported without its extension (\"./util\", \"./lib\" for lib/index.js): that file, at its line", () => {
    const pkg = JSON.stringify({ name: "extpkg", type: "module", exports: { ".": { import: "./dist/index.js" } } });
    const util = `export function helper() {\n  return 1;\n  if (x) { ]\n}\n`;
    for (const [specifier, file] of [["./util", "dist/util.js"], ["./lib", "dist/lib/index.js"]] as const) {
      const entry = `import { helper } from "${specifier}";\nexport default { name: "x", async handle(ctx, next) { helper(); await next(); } };\n`;
      const r = check("extpkg", { "node_modules/extpkg/package.json": pkg, "node_modules/extpkg/dist/index.js": entry, [`node_modules/extpkg/${file}`]: util });
      expect(r.status).toBe(1);
      expect(r.out).toContain(`${join(r.dir, "node_modules/extpkg", file)}:3:12: SyntaxError: Unexpected token ']'`);
    }
  });

  it("files Node parses itself (a .cjs that requires, an .mjs with no import): the file, line and column too", () => {
    const body = `module.exports = { name: "x", async handle(ctx, next) { await next( } };`;
    const cjs = check("./bad.cjs", { "bad.cjs": `const p = require("node:path");\n${body}\n` });
    expect(cjs.status).toBe(1);
    expect(cjs.out).toContain(`${join(cjs.dir, "bad.cjs")}:2:${body.indexOf("}") + 1}: SyntaxError: Unexpected token '}'`);
    const esm = `export default { name: "x", async handle(ctx, next) { await next( } };`;
    const mjs = check("./bad.mjs", { "bad.mjs": `${esm}\n` });
    expect(mjs.status).toBe(1);
    expect(mjs.out).toContain(`${join(mjs.dir, "bad.mjs")}:1:${esm.indexOf("}") + 1}: SyntaxError: Unexpected token '}'`);
  });

  it("a .js ES module that parses, with no package.json: says to name it .mjs or type its package, not a require cycle", () => {
    const esm = `export default { name: "x", async handle(ctx, next) { await next(); } };\n`;
    const r = check("./ok.js", { "ok.js": esm });
    expect(r.status).toBe(1);
    expect(r.out).toContain(`${join(r.dir, "ok.js")} is an ES module (import/export) with no package.json "type" above it, so it was loaded as CommonJS: name it .mjs, or add a package.json with "type": "module" beside it`);
    // The ways out load; so does CommonJS as before.
    expect(check("./ok.mjs", { "ok.mjs": esm })).toMatchObject({ status: 0 });
    expect(check("./ok.js", { "ok.js": esm, "package.json": `{ "type": "module" }` })).toMatchObject({ status: 0 });
    expect(check("./ok.cjs", { "ok.cjs": `module.exports = { name: "x", async handle(ctx, next) { await next(); } };\n` })).toMatchObject({ status: 0 });
  });
});
