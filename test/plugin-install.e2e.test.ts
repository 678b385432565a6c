// A plugin author's path, with the real npm: `model-gateway plugin new` makes a package whose own `npm test`
// (tsc, then the plugin in a real gateway through model-gateway/testing) passes against the gateway installed from
// its folder, from its tarball and from a workspace root; then deployments install the plugin each way (symlinked
// folder, copied folder, tarball, workspace; its exports have only an `import` condition) and the installed
// gateway's bin runs it. The gateway under test is a copy of this checkout, packed by npm (prepack builds dist/).
// Installs that bring the gateway tarball's dependencies skip install scripts: better-sqlite3 would compile for
// minutes, and these gateways use the memory store.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const KEY = testKey("plugin-install");
const BUILT_IN = ["allowlist", "budget", "rate-limit", "idempotency", "cache-marker", "router", "fallback", "stream-transcoder", "usage-metering"];
const LONG = 300_000;

// npm's own variables (vitest may run under `npm test`) would steer the child npm: workspace, prefix, ...
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
env.npm_config_update_notifier = "false";

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, env, encoding: "utf8", timeout: LONG - 10_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} in ${cwd}: exit ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`);
  return r.stdout + r.stderr;
}
const npm = (args: string[], cwd: string) => run("npm", [...args, "--prefer-offline", "--no-audit", "--no-fund"], cwd);
const writeJson = (file: string, value: unknown) => writeFileSync(file, JSON.stringify(value, null, 2));
const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"));

const work = realpathSync(mkdtempSync(join(tmpdir(), "mg-plugin-install-")));
const gatewayDir = join(work, "model-gateway"); // "the gateway's folder"
let gatewayTgz: string;
const authorA = join(work, "redact-email"); // gateway linked from its folder (the scaffold's default)
const authorB = join(work, "redact-tarball"); // gateway installed from its tarball

afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(() => {
  // The gateway's folder: what the package's `files` needs, the console's sources (prepack bundles them into dist/),
  // and its node_modules (linked, never installed into).
  for (const p of ["bin", "core", "plugins", "providers", "schemas", "catalog", "templates", "docs", "console", "gateway.yaml", "package.json", "README.md"]) {
    cpSync(join(ROOT, p), join(gatewayDir, p), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(gatewayDir, "node_modules"), "dir");
  npm(["pack", "--pack-destination", work], gatewayDir);
  gatewayTgz = join(work, `model-gateway-${readJson(join(ROOT, "package.json")).version}.tgz`);

  run(process.execPath, [join(gatewayDir, "bin/model-gateway.mjs"), "plugin", "new", "redact-email", "--dir", authorA], work);
  npm(["install"], authorA);
  run(process.execPath, [join(gatewayDir, "bin/model-gateway.mjs"), "plugin", "new", "redact-tarball", "--dir", authorB, "--gateway", `file:${gatewayTgz}`], work);
  npm(["install", "--ignore-scripts"], authorB);
}, LONG);

describe("a plugin package made by `model-gateway plugin new`", () => {
  it("peers on the gateway, exports only for import, and links the gateway's folder for its tests", () => {
    const pkg = readJson(join(authorA, "package.json"));
    expect(pkg.peerDependencies).toEqual({ "model-gateway": "^0.1.0" });
    expect(pkg.exports).toEqual({ ".": { types: "./dist/src/index.d.ts", import: "./dist/src/index.js" } });
    expect(pkg.devDependencies["model-gateway"]).toBe("file:../model-gateway");
    expect(lstatSync(join(authorA, "node_modules/model-gateway")).isSymbolicLink()).toBe(true);
  });

  it("passes its own npm test with the gateway linked from its folder", () => {
    const out = npm(["test"], authorA);
    expect(out).toMatch(/# pass 4\n# fail 0/);
  }, LONG);

  it("type-checks against the gateway's declarations alone: strict, skipLibCheck off, no gateway .ts source", () => {
    const out = run(process.execPath, [join(authorA, "node_modules/typescript/bin/tsc"), "-p", ".", "--noEmit", "--skipLibCheck", "false", "--listFiles"], authorA);
    const gatewayFiles = out.split("\n").filter((f) => f.startsWith(gatewayDir));
    expect(gatewayFiles).toContain(join(gatewayDir, "dist/types/core/public/plugin.d.ts"));
    expect(gatewayFiles).toContain(join(gatewayDir, "dist/types/core/public/testing.d.ts"));
    expect(gatewayFiles.filter((f) => !f.endsWith(".d.ts") && !f.includes("/node_modules/"))).toEqual([]);
  }, LONG);

  it("passes its own npm test with the gateway installed from its tarball", () => {
    expect(lstatSync(join(authorB, "node_modules/model-gateway")).isDirectory()).toBe(true); // a copy, not a link
    const out = npm(["test"], authorB);
    expect(out).toMatch(/# pass 4\n# fail 0/);
  }, LONG);
});

/** A deployment's gateway.yaml: the simulator, one live key, these plugins before the built-in ones. */
function deployment(dir: string, plugins: Record<string, { module: string; options?: unknown }>, name = "gateway.yaml"): string {
  const file = join(dir, name);
  writeFileSync(file, YAML.stringify({
    store: { kind: "memory" },
    models: { "sim/echo": { endpoints: [{ provider: "sim", model: "echo" }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
    plugins,
    pipeline: ["auth", ...Object.keys(plugins), ...BUILT_IN],
  }));
  return file;
}
const ask = (gw: ChildGateway, content: string) =>
  postJson(`${gw.baseURL}/chat/completions`, { model: "sim/echo", messages: [{ role: "user", content }] }, { authorization: `Bearer ${KEY}` });

describe("a deployment that installs the gateway and the plugins from their folders (symlinks)", () => {
  const dir = join(work, "deploy-links");
  let gw: ChildGateway;
  let bin: string;

  beforeAll(async () => {
    mkdirSync(dir);
    writeJson(join(dir, "package.json"), { name: "deploy-links", private: true });
    npm(["install", gatewayDir, authorA, authorB], dir);
    bin = join(dir, "node_modules/model-gateway/bin/model-gateway.mjs");
    // redact-tarball runs first and refuses: its GatewayError comes from its own copy of the gateway (the tarball
    // in its node_modules) unless the bin maps model-gateway/plugin to the running gateway's entry.
    deployment(dir, { "redact-tarball": { module: "redact-tarball", options: { refuse: true } }, "redact-email": { module: "redact-email" } });
    gw = await startChildGateway(join(dir, "gateway.yaml"), { LOG_LEVEL: "silent" }, [], { bin, cwd: dir });
  }, LONG);
  afterAll(async () => {
    await gw?.stop();
  });

  it("links them, and `model-gateway check` loads both plugins", () => {
    for (const p of ["model-gateway", "redact-email", "redact-tarball"]) expect(lstatSync(join(dir, "node_modules", p)).isSymbolicLink()).toBe(true);
    const out = run(process.execPath, [bin, "check", "gateway.yaml"], dir);
    expect(out).toContain("pipeline: auth → redact-tarball → redact-email → allowlist");
  });

  it("runs both; a plugin's GatewayError answers as the gateway's own error, whichever gateway copy the plugin has", async () => {
    const ok = await ask(gw, "hello there");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-redact-tarball-masked")).toBe("0");
    expect(ok.headers.get("x-redact-email-masked")).toBe("0");
    const refused = await ask(gw, "mail ada@example.com");
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: "INVALID_REQUEST", message: "redact-tarball: the request holds 1 e-mail address(es)" });
  });

  it("names a mistyped option, with the file and line, when the config loads", () => {
    const file = deployment(dir, { "redact-email": { module: "redact-email", options: { replacment: "***" } } }, "typo.yaml");
    const r = spawnSync(process.execPath, [bin, "check", file], { cwd: dir, env, encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`^${file}:\\d+:\\d+: plugin redact-email options: unknown option "replacment"$`, "m"));
  });
});

describe("a deployment with the gateway's tarball, a plugin's tarball, a copied plugin folder and a workspace plugin", () => {
  const dir = join(work, "deploy-ws");
  let gw: ChildGateway;
  let bin: string;
  let manifestAt: number;

  beforeAll(async () => {
    mkdirSync(dir);
    npm(["pack", "--pack-destination", work], authorA);
    writeJson(join(dir, "package.json"), {
      name: "deploy-ws",
      private: true,
      dependencies: { "model-gateway": `file:${gatewayTgz}`, "redact-email": `file:${join(work, "redact-email-0.1.0.tgz")}`, "redact-tarball": `file:${authorB}` },
    });
    npm(["install", "--install-links", "--ignore-scripts"], dir);
    bin = join(dir, "node_modules/model-gateway/bin/model-gateway.mjs");
    manifestAt = statSync(join(dir, "node_modules/model-gateway/dist/build.json")).mtimeMs;
    // The workspace plugin, made by the installed gateway, then added to the workspace.
    run(process.execPath, [bin, "plugin", "new", "redact-ws", "--dir", "plugins/redact-ws"], dir);
    writeJson(join(dir, "package.json"), { ...readJson(join(dir, "package.json")), workspaces: ["plugins/*"] });
    npm(["install", "--install-links", "--ignore-scripts"], dir);
    npm(["run", "build", "-w", "plugins/redact-ws"], dir); // its prepare, which --ignore-scripts skipped
    deployment(dir, {
      "redact-ws": { module: "redact-ws", options: { replacement: "[ws]" } },
      "redact-email": { module: "redact-email" },
      "redact-tarball": { module: "redact-tarball" },
    });
    gw = await startChildGateway(join(dir, "gateway.yaml"), { LOG_LEVEL: "silent" }, [], { bin, cwd: dir });
  }, LONG);
  afterAll(async () => {
    await gw?.stop();
  });

  it("installs copies (tarballs, --install-links) and links the workspace; the gateway runs its packed bundle as is", () => {
    for (const p of ["model-gateway", "redact-email", "redact-tarball"]) expect(lstatSync(join(dir, "node_modules", p)).isDirectory()).toBe(true);
    expect(realpathSync(join(dir, "node_modules/redact-ws"))).toBe(join(dir, "plugins/redact-ws"));
    // Started from node_modules, the release bundle is used: npm's extraction times do not make it look stale.
    expect(statSync(join(dir, "node_modules/model-gateway/dist/build.json")).mtimeMs).toBe(manifestAt);
  });

  it("the workspace plugin was made against the gateway version, and passes its own npm test there", () => {
    expect(readJson(join(dir, "plugins/redact-ws/package.json")).devDependencies["model-gateway"]).toBe("^0.1.0");
    const out = npm(["test", "-w", "plugins/redact-ws"], dir);
    expect(out).toMatch(/# pass 4\n# fail 0/);
  }, LONG);

  it("runs all three: the first masks the address before the upstream sees it, the others find none left", async () => {
    const r = await ask(gw, "Write to ada@example.com about the invoice");
    expect(r.status).toBe(200);
    const reply: string = r.json.choices[0].message.content;
    expect(reply).toContain("Write to [ws] about the invoice");
    expect(reply).not.toContain("ada@example.com");
    expect(r.headers.get("x-redact-ws-masked")).toBe("1");
    expect(r.headers.get("x-redact-email-masked")).toBe("0");
    expect(r.headers.get("x-redact-tarball-masked")).toBe("0");
  });
});
