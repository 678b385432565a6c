import { describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { findPackageRoot, packageRoot } from "./package-root.ts";

describe("packageRoot", () => {
  it("is the directory of this checkout's package.json", () => {
    expect(packageRoot()).toBe(join(import.meta.dirname, ".."));
  });

  it("walks up any number of levels, from the sources' core/x/ as from the bundle's dist/", () => {
    const root = mkdtempSync(join(tmpdir(), "mg-root-"));
    writeFileSync(join(root, "package.json"), "{}");
    mkdirSync(join(root, "core/store"), { recursive: true });
    mkdirSync(join(root, "dist"));
    expect(findPackageRoot(pathToFileURL(join(root, "core/store/usage-command.ts")).href)).toBe(root);
    expect(findPackageRoot(pathToFileURL(join(root, "dist/cli-ABC.mjs")).href)).toBe(root);
    expect(findPackageRoot(pathToFileURL(join(root, "x.mjs")).href)).toBe(root);
  });

  it("throws when no directory above holds a package.json", () => {
    expect(() => findPackageRoot("file:///x.mjs")).toThrow(/no package.json/);
  });
});
