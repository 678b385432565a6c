// A third-party plugin installed as a package (its own package.json, in node_modules) that imports only the
// public entry `model-gateway/plugin`, loaded by a gateway process the way a deployment runs it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const FIXTURE = fileURLToPath(new URL("./fixtures/plugin-package", import.meta.url));
const KEY = testKey("plugin-pkg", true);
let dir: string;
let outside: string;
let gw: ChildGateway;
const LINKED = `import { definePlugin, GatewayError } from "model-gateway/plugin";
export default definePlugin({
  name: "acme-linked",
  async handle(ctx, next) {
    ctx.responseHeaders["x-acme-linked"] = "yes";
    if (JSON.stringify(ctx.body).includes("linked-stop")) throw new GatewayError(429, "RATE_LIMITED", "acme-linked says wait");
    await next();
  },
});
`;

const chat = (model: string, content = "hi") =>
  postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content }] }, { authorization: `Bearer ${KEY}` });

beforeAll(async () => {
  // The deployment folder: model-gateway linked in (what `npm install <folder>` does), the plugin package copied in
  // (what installing its tarball does), and gateway.yaml naming the plugins by package name.
  dir = mkdtempSync(join(tmpdir(), "mg-plugin-pkg-"));
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(ROOT, join(dir, "node_modules", "model-gateway"), "dir");
  cpSync(FIXTURE, join(dir, "node_modules", "acme-mg-plugins"), { recursive: true });
  // A plugin folder outside the deployment, symlinked in (what `npm install ../acme-linked` does): no model-gateway
  // can be found from where it really is, and its exports have only an `import` condition.
  outside = mkdtempSync(join(tmpdir(), "mg-plugin-outside-"));
  writeFileSync(join(outside, "package.json"), JSON.stringify({ name: "acme-linked", type: "module", exports: { ".": { import: "./index.js" } }, peerDependencies: { "model-gateway": ">=0.1.0" } }));
  writeFileSync(join(outside, "index.js"), LINKED);
  symlinkSync(outside, join(dir, "node_modules", "acme-linked"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "deploy", private: true, dependencies: { "model-gateway": "*", "acme-mg-plugins": "1.0.0" } }));
  writeFileSync(join(dir, "gateway.yaml"), YAML.stringify({
    models: { "openai/gpt-4o-mini": { endpoints: [{ provider: "sim", model: "m" }] }, "openai/gpt-4o": { endpoints: [{ provider: "sim", model: "m" }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
    plugins: {
      "acme-tagger": { module: "acme-mg-plugins", options: { value: "tagged", block: "openai/gpt-4o" } },
      "acme-crasher": { module: "acme-mg-plugins/crasher" },
      "acme-linked": { module: "acme-linked" },
    },
    pipeline: ["auth", "acme-linked", "acme-tagger", "acme-crasher", "router"],
  }));
  gw = await startChildGateway(join(dir, "gateway.yaml"));
});

afterAll(async () => {
  await gw?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (outside) rmSync(outside, { recursive: true, force: true });
});

describe("a plugin installed as a package", () => {
  it("imports model-gateway/plugin and nothing internal: the entry is exported, internal paths are not", () => {
    const req = createRequire(join(dir, "node_modules", "acme-mg-plugins", "index.js"));
    expect(req.resolve("model-gateway/plugin")).toBe(join(realpathSync(ROOT), "dist", "plugin.mjs"));
    expect(() => req.resolve("model-gateway/core/errors.ts")).toThrow(expect.objectContaining({ code: "ERR_PACKAGE_PATH_NOT_EXPORTED" }));
  });

  it("runs: its header on the response, and its GatewayError answers as the gateway's own error", async () => {
    const ok = await chat("openai/gpt-4o-mini");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-acme")).toBe("tagged");
    const blocked = await chat("openai/gpt-4o");
    expect(blocked.status).toBe(403);
    expect(blocked.json.error).toMatchObject({ code: "MODEL_NOT_ALLOWED", message: "acme blocks openai/gpt-4o" });
  });

  it("a plugin symlinked from outside the deployment, exporting for import only, gets the gateway's model-gateway/plugin", async () => {
    const ok = await chat("openai/gpt-4o-mini");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-acme-linked")).toBe("yes");
    const stopped = await chat("openai/gpt-4o-mini", "linked-stop");
    expect(stopped.status).toBe(429);
    expect(stopped.json.error).toMatchObject({ code: "RATE_LIMITED", message: "acme-linked says wait" });
  });

  it("a throwing plugin from the package fails that request with 500 INTERNAL; the process keeps serving", async () => {
    const r = await chat("openai/gpt-4o-mini", "crash please");
    expect(r.status).toBe(500);
    expect(r.json.error).toMatchObject({ code: "INTERNAL", message: "Internal gateway error" });
    expect(r.text).not.toContain("acme boom");
    expect(gw.proc.exitCode).toBeNull();
    const after = await chat("openai/gpt-4o-mini");
    expect(after.status).toBe(200);
    expect(after.headers.get("x-acme")).toBe("tagged");
  });
});
