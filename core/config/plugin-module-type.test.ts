// The module-type hints, branch by branch (test/plugin-module-type.test.ts loads real plugins through the bin).
import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { moduleTypeHint } from "./plugin-module-type.ts";

/** A plugin file's URL in a fresh folder, with a package.json of `type` beside it (none when undefined; "" names no type). */
function pluginAt(name: string, type?: string): string {
  const dir = mkdtempSync(join(tmpdir(), "mg-module-type-"));
  if (type !== undefined) writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "p", ...(type ? { type } : {}) }));
  return pathToFileURL(join(dir, name)).href;
}

const err = (name: string, message: string, code?: string) => Object.assign(new Error(message), { name, ...(code ? { code } : {}) });

describe("moduleTypeHint", () => {
  it("a CommonJS plugin requiring model-gateway/plugin: make it an ES module and import it", () => {
    const hint = moduleTypeHint(pluginAt("x.ts", "commonjs"), err("Error", "Cannot find module 'model-gateway/plugin'\nRequire stack:\n- x.ts", "MODULE_NOT_FOUND"));
    expect(hint).toMatch(/^it was loaded as CommonJS \(.*package\.json says "type": "commonjs"\), which cannot require model-gateway\/plugin \(an ES module\): write it as an ES module named \.mts/);
  });

  it("a .cts file is CommonJS by its name: no package.json is blamed", () => {
    expect(moduleTypeHint(pluginAt("x.cts"), err("Error", "Cannot require() ES Module x in a cycle.", "ERR_REQUIRE_CYCLE_MODULE"))).toBe("it was loaded as CommonJS (a .cts file is CommonJS): write it as an ES module, named .mts or .mjs");
    // Compiled: a syntax error in a .cts file is the author's own.
    expect(moduleTypeHint(pluginAt("x.cts"), err("SyntaxError", "Unexpected token ':'"))).toBeUndefined();
  });

  it('a package.json that names no type, or "type": "module", leaves a .ts plugin an ES module', () => {
    for (const type of ["", "module"]) {
      expect(moduleTypeHint(pluginAt("x.ts", type), err("ReferenceError", "module is not defined in ES module scope"))).toContain("it was loaded as an ES module");
      expect(moduleTypeHint(pluginAt("x.ts", type), err("SyntaxError", "Unexpected token ':'"))).toBeUndefined();
    }
  });

  it("says nothing for JavaScript files (Node's own messages name the extension) or for other failures", () => {
    expect(moduleTypeHint(pluginAt("x.js"), err("ReferenceError", "require is not defined in ES module scope"))).toBeUndefined();
    expect(moduleTypeHint(pluginAt("x.ts"), err("ReferenceError", "foo is not defined"))).toBeUndefined();
    expect(moduleTypeHint(pluginAt("x.ts", "commonjs"), err("Error", "Cannot find module 'left-pad'", "MODULE_NOT_FOUND"))).toBeUndefined();
  });
});
