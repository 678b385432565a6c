// A TypeScript plugin loaded as the wrong module type: `check` (the real bin, as an operator runs it) says what to
// change, not only Node's symptom ("Unexpected token ':'", "require is not defined in ES module scope").
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const BIN = resolve("bin/model-gateway.mjs");

/** A gateway.yaml loading `plugin` (named x) from ./p/<name>, with `files` beside it in p/; the check's output. */
function check(name: string, plugin: string, files: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "mg-plugin-type-"));
  mkdirSync(join(dir, "p"));
  writeFileSync(join(dir, "p", name), plugin);
  for (const [n, t] of Object.entries(files)) writeFileSync(join(dir, "p", n), t);
  const config = join(dir, "gateway.yaml");
  writeFileSync(config, `store: { kind: memory }\nplugins:\n  x: { module: ./p/${name} }\npipeline: [auth, x, router]\n`);
  const r = spawnSync(process.execPath, [BIN, "check", config], { encoding: "utf8", env: { ...process.env, LOG_LEVEL: "silent" }, timeout: 60_000 });
  return { status: r.status, out: r.stdout + r.stderr, pkg: join(dir, "p", "package.json") };
}

const COMMONJS_PACKAGE = { "package.json": `{ "name": "my-plugins", "type": "commonjs" }` };

describe("a TypeScript plugin of the wrong module type", () => {
  it('with TypeScript syntax under "type": "commonjs": says a .ts file loaded as CommonJS is not compiled, and what to do', () => {
    const r = check("tagger.ts", `module.exports = { name: "x", async handle(ctx: any, next: () => Promise<void>) { await next(); } };\n`, COMMONJS_PACKAGE);
    expect(r.status).toBe(1);
    expect(r.out).toContain("Unexpected token ':'");
    // Before: "Unexpected token ':'" and nothing more.
    expect(r.out).toContain(`it was loaded as CommonJS (${r.pkg} says "type": "commonjs"), and a .ts file loaded as CommonJS is not compiled from TypeScript: write it as an ES module named .mts, or set "type": "module" in ${r.pkg}, or name it .cts to keep it CommonJS`);
  });

  it("written as CommonJS (require, module.exports) with no package.json: says it is an ES module, and what to use instead", () => {
    const r = check("tagger.ts", `const path = require("node:path");\nmodule.exports = { name: "x", async handle(ctx: any, next: any) { await next(); } };\n`);
    expect(r.status).toBe(1);
    expect(r.out).toContain("require is not defined in ES module scope");
    // Before: Node's message alone, whose "use import instead" does not say why a .ts file is an ES module here.
    expect(r.out).toContain(`it was loaded as an ES module (a .ts plugin is one unless the package.json above it says "type": "commonjs"), where require, module, exports and __dirname do not exist: use import and export default (import.meta.dirname for __dirname), or name it .cts to keep it CommonJS`);
  });

  it("the ways out the hints name load: .cts kept CommonJS, .mts as an ES module", () => {
    expect(check("tagger.cts", `module.exports = { name: "x", async handle(ctx: any, next: any) { await next(); } };\n`, COMMONJS_PACKAGE)).toMatchObject({ status: 0 });
    const esm = `import { definePlugin } from "model-gateway/plugin";\nexport default definePlugin({ name: "x", async handle(ctx: any, next: () => Promise<void>) { await next(); } });\n`;
    expect(check("tagger.mts", esm, COMMONJS_PACKAGE)).toMatchObject({ status: 0 });
  });
});
