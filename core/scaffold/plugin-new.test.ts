import { afterAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gatewaySpec, scaffoldPlugin } from "./plugin-new.ts";

// The running gateway's own templates (this checkout); test/plugin-install.e2e.test.ts installs and tests the output.
const base = mkdtempSync(join(tmpdir(), "mg-scaffold-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("scaffoldPlugin", () => {
  it("writes a package named after the plugin, every placeholder filled", () => {
    const made = scaffoldPlugin({ name: "@acme/redact-email", dir: join(base, "a"), gateway: "^0.1.0" });
    expect(made.plugin).toBe("redact-email");
    const pkg = JSON.parse(readFileSync(join(made.dir, "package.json"), "utf8"));
    expect(pkg).toMatchObject({ name: "@acme/redact-email", type: "module", peerDependencies: { "model-gateway": expect.stringMatching(/^\^\d+\.\d+\.\d+$/) } });
    expect(pkg.devDependencies).toMatchObject({ "model-gateway": "^0.1.0", typescript: expect.any(String), "@types/node": expect.any(String) });
    for (const f of ["src/index.ts", "test/index.test.ts", "tsconfig.json", "README.md", ".gitignore"]) {
      const text = readFileSync(join(made.dir, f), "utf8");
      expect(text, f).not.toMatch(/__[A-Z_]+__/);
    }
    expect(readFileSync(join(made.dir, "src/index.ts"), "utf8")).toContain(`name: "redact-email"`);
    expect(readFileSync(join(made.dir, "README.md"), "utf8")).toContain("acme-redact-email-0.1.0.tgz");
  });

  it("refuses a name that is not a package and plugin name, and a folder that is not empty", () => {
    expect(() => scaffoldPlugin({ name: "Redact Email", dir: join(base, "b") })).toThrow(/is not a usable name/);
    expect(() => scaffoldPlugin({ name: "../evil", dir: join(base, "b") })).toThrow(/is not a usable name/);
    expect(() => scaffoldPlugin({ name: "@acme/rate-limit", dir: join(base, "b"), reserved: ["auth", "rate-limit"] })).toThrow(/"rate-limit" is the name of a built-in plugin/);
    expect(existsSync(join(base, "b"))).toBe(false);
    mkdirSync(join(base, "c"));
    writeFileSync(join(base, "c", "keep.txt"), "mine");
    expect(() => scaffoldPlugin({ name: "ok", dir: join(base, "c") })).toThrow(/exists and is not empty/);
    expect(readFileSync(join(base, "c", "keep.txt"), "utf8")).toBe("mine");
  });
});

describe("gatewaySpec", () => {
  it("links a gateway folder of its own, relative to the plugin", () => {
    expect(gatewaySpec("/src/model-gateway", "/src/plugins/redact", "0.1.0")).toBe("file:../../model-gateway");
  });

  it("asks for the version of a gateway installed in a node_modules (a workspace root, or the author installs it)", () => {
    expect(gatewaySpec("/deploy/node_modules/model-gateway", "/deploy/plugins/redact", "0.1.0")).toBe("^0.1.0");
  });
});
