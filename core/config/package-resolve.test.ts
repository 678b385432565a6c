import { afterAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { resolvePackageImport } from "./package-resolve.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "mg-pkg-resolve-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A package folder with these files (package.json given as an object). */
function pkg(dir: string, manifest: Record<string, unknown>, files: string[] = []): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest));
  for (const f of files) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    writeFileSync(join(dir, f), "export default 1;\n");
  }
  return dir;
}

const deploy = join(base, "deploy");
pkg(deploy, { name: "deploy", private: true });
const nm = join(deploy, "node_modules");
pkg(join(nm, "import-only"), { name: "import-only", type: "module", exports: { ".": { types: "./dist/index.d.ts", import: "./dist/index.js" } } }, ["dist/index.js"]);
pkg(join(nm, "require-only"), { name: "require-only", exports: { ".": { require: "./index.cjs" } } }, ["index.cjs"]);
pkg(join(nm, "sugar"), { name: "sugar", exports: "./main.js" }, ["main.js"]);
pkg(join(nm, "multi"), {
  name: "multi",
  exports: { ".": "./index.js", "./extra": { import: "./extra.mjs", default: "./extra.cjs" }, "./features/*.js": "./src/features/*.js", "./features/private/*": null },
}, ["index.js", "extra.mjs", "extra.cjs", "src/features/a.js"]);
pkg(join(nm, "@acme", "plugins"), { name: "@acme/plugins", exports: { "./redact": "./redact.js" } }, ["redact.js"]);
pkg(join(nm, "legacy"), { name: "legacy", main: "lib/entry.js" }, ["lib/entry.js"]);
pkg(join(nm, "unbuilt"), { name: "unbuilt", exports: { ".": { import: "./dist/index.js" } } });
const linkedReal = pkg(join(base, "elsewhere", "linked"), { name: "linked", exports: { import: "./index.js" } }, ["index.js"]);
symlinkSync(linkedReal, join(nm, "linked"), "dir");

describe("resolvePackageImport", () => {
  it("resolves a package whose exports have only an import condition (require.resolve cannot)", () => {
    expect(resolvePackageImport("import-only", deploy)).toBe(join(nm, "import-only/dist/index.js"));
    expect(() => createRequire(join(deploy, "gateway.yaml")).resolve("import-only")).toThrow();
  });

  it("walks up node_modules from a nested folder, and handles scoped names and exports sugar", () => {
    const nested = join(deploy, "config", "prod");
    mkdirSync(nested, { recursive: true });
    expect(resolvePackageImport("sugar", nested)).toBe(join(nm, "sugar/main.js"));
    expect(resolvePackageImport("@acme/plugins/redact", nested)).toBe(join(nm, "@acme/plugins/redact.js"));
  });

  it("picks the import condition of a subpath and expands * patterns", () => {
    expect(resolvePackageImport("multi", deploy)).toBe(join(nm, "multi/index.js"));
    expect(resolvePackageImport("multi/extra", deploy)).toBe(join(nm, "multi/extra.mjs"));
    expect(resolvePackageImport("multi/features/a.js", deploy)).toBe(join(nm, "multi/src/features/a.js"));
  });

  it("uses main for a package without exports, and the real path of a symlinked package", () => {
    expect(resolvePackageImport("legacy", deploy)).toBe(join(nm, "legacy/lib/entry.js"));
    expect(resolvePackageImport("linked", deploy)).toBe(join(linkedReal, "index.js"));
  });

  it("resolves the enclosing package by its own name (self-reference)", () => {
    const self = pkg(join(base, "self"), { name: "self-plugin", exports: { ".": { import: "./index.js" } } }, ["index.js"]);
    expect(resolvePackageImport("self-plugin", join(self))).toBe(join(self, "index.js"));
  });

  it("says which package is missing and where it looked", () => {
    expect(() => resolvePackageImport("redact-email", deploy)).toThrow(
      expect.objectContaining({ code: "ERR_MODULE_NOT_FOUND", message: expect.stringContaining(`package "redact-email" is not installed in ${nm}`) }),
    );
  });

  it("refuses subpaths the package does not export for import, naming its package.json", () => {
    expect(() => resolvePackageImport("multi/index.js", deploy)).toThrow(expect.objectContaining({ code: "ERR_PACKAGE_PATH_NOT_EXPORTED" }));
    expect(() => resolvePackageImport("multi/features/private/x", deploy)).toThrow(expect.objectContaining({ code: "ERR_PACKAGE_PATH_NOT_EXPORTED" }));
    expect(() => resolvePackageImport("require-only", deploy)).toThrow(
      expect.objectContaining({ message: expect.stringContaining(join(nm, "require-only/package.json")) }),
    );
  });

  it("says an exported file that is missing is not built", () => {
    expect(() => resolvePackageImport("unbuilt", deploy)).toThrow(
      expect.objectContaining({ message: expect.stringMatching(/exports \. as \.\/dist\/index\.js, which does not exist \(is the package built\?\)/) }),
    );
  });
});
