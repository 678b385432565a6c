import { describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "./load.ts";
import { ConfigError, formatProblem } from "./source.ts";
import { problems, write } from "./config.testkit.ts";


const HASH = "a".repeat(64);

describe("loadConfig", () => {
  it("loads the issue's example format and builds lookup maps", async () => {
    const file = write(`
server: { host: 127.0.0.1, port: 8787 }
store: { kind: memory }
providers:
  openai:  { protocol: openai, base_url: https://api.openai.com/v1, api_key: "\${OPENAI_API_KEY}" }
  sim:     { protocol: sim }
models:
  openai/gpt-4o-mini:
    name: GPT-4o mini
    type: language
    context_window: 128000
    max_tokens: 16384
    tags: [tool-use, vision]
    endpoints:
      - provider: openai
        model: gpt-4o-mini
        pricing: { input: "0.00000015", output: "0.0000006", input_cache_read: "0.000000075" }
projects:
  acme:
    keys:
      - { id: ci-bot, sha256: "${HASH}", expires_at: "2027-01-01T00:00:00Z" }
    allow_models: ["openai/*"]
    budget: { usd: "100", period: month }
    rate_limits: { rpm: 600, tpm: 1000000 }
pipeline: [auth, router]
`);
    const notices: string[] = [];
    const cfg = await loadConfig(file, { env: { OPENAI_API_KEY: "sk-1" }, onNotice: (m) => notices.push(m) });
    expect(cfg.providers.get("openai")!.api_key).toBe("sk-1");
    expect(cfg.models.get("openai/gpt-4o-mini")!.endpoints[0]).toMatchObject({ provider: "openai", upstreamModel: "gpt-4o-mini", contextWindow: 128000 });
    expect(cfg.keys.get(HASH)).toMatchObject({ id: "ci-bot", projectId: "acme", expiresAt: Date.parse("2027-01-01T00:00:00Z") });
    expect(cfg.pipeline.map((p) => p.name)).toEqual(["auth", "router"]);
    // No stream-transcoder in this pipeline: cross-protocol requests will fail; and the project's policies, with
    // no plugin to enforce them, are named.
    expect(notices).toEqual([
      expect.stringContaining("pipeline has no stream-transcoder"),
      expect.stringContaining("pipeline has no usage-metering"),
      "pipeline has no budget: budget not enforced for project acme",
      "pipeline has no rate-limit: rate limits not enforced for project acme",
      "pipeline has no allowlist: allow_models not enforced for project acme",
    ]);
  });

  it("disables a provider whose key variable is unset, with one notice, and drops its endpoints", async () => {
    const file = write(`
providers:
  openai: { protocol: openai, api_key: "\${OPENAI_API_KEY}" }
models:
  openai/x: { endpoints: [{ provider: openai, model: x, pricing: { input: "0.000001", output: "0.000002" } }] }
`);
    const notices: string[] = [];
    const cfg = await loadConfig(file, { env: {}, onNotice: (m) => notices.push(m) });
    expect(cfg.providers.has("openai")).toBe(false);
    expect(cfg.providers.has("sim")).toBe(true);
    expect(cfg.models.get("openai/x")!.endpoints).toEqual([]);
    expect(notices).toEqual(['provider "openai" disabled: $OPENAI_API_KEY is not set']);
  });

  it("interpolates defaults and keeps a whole-variable number a number", async () => {
    const cfg = await loadConfig(write(`server: { port: "\${PORT:-9000}", host: "\${HOST:-0.0.0.0}" }\n`), { env: {} });
    expect(cfg.server).toMatchObject({ port: 9000, host: "0.0.0.0" });
  });

  it("reports every problem as file:line:column with what is wrong", async () => {
    const out = await problems(`providers:
  openai: { protocol: openai, api_key: sk }
models:
  openai/a:
    endpoints:
      - provider: opneai
        model: a
        pricing: { input: 0.0001 }
  openai/b:
    endpoints:
      - { provider: openai, model: b, pricing: { output: "1e-6" } }
projects:
  p: { keys: [{ id: k, sha256: "${HASH}" }], budget: { usd: "5", period: year } }
pipeline: [auth, routr]
`);
    expect(out).toEqual([
      'F:8:27: models.openai/a.endpoints.0.pricing.input: must be a decimal string: quote it: "0.0001"',
      'F:11:58: models.openai/b.endpoints.0.pricing.output: must be a decimal string such as "0.0000025" (quoted, no exponent)',
      'F:13:131: projects.p.budget.period: must be one of "day", "week", "month", "total"',
    ]);
  });

  it("checks references and the pipeline once the schema passes", async () => {
    const out = await problems(`providers:
  openai: { protocol: openai, api_key: sk }
models:
  openai/a:
    endpoints:
      - provider: opneai
        model: a
pipeline: [router, routr, auth]
`);
    expect(out).toEqual([
      'F:6:19: model openai/a: endpoint names unknown provider "opneai" (declared: openai, sim)',
      expect.stringMatching(/^F:8:20: unknown plugin "routr" \(built in: auth, .*router.*; others must be declared under plugins:\)$/),
    ]);
  });

  it("names a plugin listed before one it depends on", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-cfg-"));
    writeFileSync(join(dir, "needs-auth.mjs"), `export default { name: "needs-auth", dependsOn: ["auth"], handle: (ctx, next) => next() };`);
    const file = write(`plugins:\n  needs-auth: { module: ./needs-auth.mjs }\npipeline: [needs-auth, auth, router]\n`, "gateway.yaml", dir);
    const err = await loadConfig(file, { env: {} }).catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(formatProblem(err.problems[0])).toBe(`${file}:3:12: needs-auth needs auth before it, but auth comes after it`);
  });

  it("names the plugin option that is unknown or missing, at its line in the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-cfg-"));
    writeFileSync(join(dir, "strict.mjs"), `export default { name: "strict", optionsSchema: { type: "object", additionalProperties: false, required: ["replacement"],
      properties: { replacement: { type: "string" }, nested: { type: "object", additionalProperties: false, properties: { a: { type: "number" } } } } },
      handle: (ctx, next) => next() };`);
    const file = write(`plugins:\n  strict:\n    module: ./strict.mjs\n    options:\n      replacment: "[email]"\n      nested: { a: 1, b: 2 }\npipeline: [auth, strict, router]\n`, "gateway.yaml", dir);
    const err = await loadConfig(file, { env: {} }).catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.problems.map(formatProblem).sort()).toEqual([
      `${file}:4:5: plugin strict options: missing required option "replacement"`,
      `${file}:5:7: plugin strict options: unknown option "replacment"`,
      `${file}:6:23: plugin strict options.nested: unknown option "b"`,
    ].sort());
  });

  it("gives a plugin the options it validated: {} when absent, with its schema's defaults filled in", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-cfg-"));
    writeFileSync(join(dir, "defaults.mjs"), `export default { name: "defaults", optionsSchema: { type: "object", properties: { replacement: { type: "string", default: "[email]" } } }, handle: (c, n) => n() };`);
    writeFileSync(join(dir, "plain.mjs"), `export default { name: "plain", handle: (c, n) => n() };`);
    const file = write(`plugins:\n  defaults: { module: ./defaults.mjs }\n  plain: { module: ./plain.mjs }\npipeline: [auth, defaults, plain, router]\n`, "gateway.yaml", dir);
    const cfg = await loadConfig(file, { env: {} });
    expect(cfg.pipeline.find((p) => p.name === "defaults")!.options).toEqual({ replacement: "[email]" });
    expect(cfg.pipeline.find((p) => p.name === "plain")!.options).toEqual({});
  });

  it("says why a declared plugin could not load, without also calling it unknown", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-cfg-"));
    writeFileSync(join(dir, "broken.mjs"), `import "model-gateway-nowhere/plugin";\nexport default { name: "broken", handle: (c, n) => n() };`);
    const file = write(`plugins:\n  broken: { module: ./broken.mjs }\n  absent: { module: redact-email }\npipeline: [auth, broken, absent, router]\n`, "gateway.yaml", dir);
    const err = await loadConfig(file, { env: {} }).catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.problems.map(formatProblem)).toEqual([
      expect.stringMatching(new RegExp(`^${file}:2:21: cannot load plugin "broken" from ./broken.mjs: Cannot find package 'model-gateway-nowhere`)),
      `${file}:3:21: cannot load plugin "absent" from redact-email: package "redact-email" is not installed in ${join(dir, "node_modules")} or a parent folder's node_modules (npm install it next to gateway.yaml)`,
    ]);
  });

  it("loads a plugin package whose exports have only an import condition", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-cfg-"));
    const pkg = join(dir, "node_modules", "import-only-plugin");
    mkdirSync(join(pkg, "dist"), { recursive: true });
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "import-only-plugin", type: "module", exports: { ".": { types: "./dist/index.d.ts", import: "./dist/index.js" } } }));
    writeFileSync(join(pkg, "dist", "index.js"), `export default { name: "io", handle: (ctx, next) => next() };`);
    const file = write(`plugins:\n  io: { module: import-only-plugin }\npipeline: [auth, io, router]\n`, "gateway.yaml", dir);
    const cfg = await loadConfig(file, { env: {} });
    expect(cfg.pipeline.map((p) => p.name)).toEqual(["auth", "io", "router"]);
  });

  it("reports an unset variable without a default, and YAML syntax errors, with positions", async () => {
    expect(await problems(`server:\n  public_url: "\${PUBLIC_URL}"\n`)).toEqual([
      "F:2:15: server.public_url: environment variable PUBLIC_URL is not set and has no default (write ${PUBLIC_URL:-default})",
    ]);
    const syntax = await problems(`models:\n  a/b: {endpoints: [\n`);
    expect(syntax[0]).toMatch(/^F:\d+:\d+: /);
  });

  it("reports a server.trusted_proxies entry that is no address or range, at the entry", async () => {
    expect(await problems(`server:\n  trusted_proxies: ["10.0.0.0/8", "proxy.internal"]\n`)).toEqual([
      'F:2:35: server.trusted_proxies: "proxy.internal" is neither an IP address nor a CIDR range (10.0.0.0/8, fd00::/8)',
    ]);
  });

  it("loads admin keys with their scope, and refuses one that is also a project key, or a scope it does not know", async () => {
    const file = write(`projects:\n  p: { keys: [{ id: k, sha256: "${HASH}" }] }\nadmin_keys:\n  - { id: ops, sha256: "${"b".repeat(64)}", scope: write, expires_at: "2030-01-01T00:00:00Z" }\n`);
    const cfg = await loadConfig(file, { env: {} });
    expect(cfg.adminKeys.get("b".repeat(64))).toMatchObject({ id: "ops", scope: "write", expiresAt: Date.parse("2030-01-01T00:00:00Z"), revoked: false });
    expect(cfg.keys.has("b".repeat(64))).toBe(false); // never a project key
    expect(await problems(`projects:\n  p: { keys: [{ id: k, sha256: "${HASH}" }] }\nadmin_keys:\n  - { id: ops, sha256: "${HASH}", scope: write }\n`)).toEqual([
      "F:4:24: admin key ops: the same key is already declared by p/k",
    ]);
    expect((await problems(`admin_keys:\n  - { id: ops, sha256: "${HASH}", scope: admin }\n`))[0]).toMatch(/^F:2:.*scope.*read.*write/);
  });

  it("refuses a file with nothing in it (empty, only comments, or null) instead of loading a gateway with no projects", async () => {
    const empty = ["F:1:1: the file is empty (nothing but whitespace, comments or null): refused, as it would drop every project and key"];
    for (const text of ["", "\n\n", "# comments only\n   # and more\n", "~\n", "null\n", "---\n"]) expect(await problems(text)).toEqual(empty);
    expect(await problems("projects: {}\n")).toEqual([]); // an empty mapping is said on purpose
  });

  it("reports unknown fields at the key", async () => {
    expect(await problems(`server:\n  prot: 1\n`)).toEqual(['F:2:3: server: unknown field "prot" (did you mean "port"?)']);
  });

  it("merges models from included files; entries in the main file win", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-cfg-"));
    writeFileSync(join(dir, "catalog.yaml"), `models:\n  x/a: { name: From catalog, endpoints: [{ provider: sim, model: a }] }\n  x/b: { name: B, endpoints: [{ provider: nope, model: b }] }\n`);
    const file = write(`include: [catalog.yaml]\nmodels:\n  x/a: { name: Override, endpoints: [{ provider: sim, model: a2 }] }\n`, "gateway.yaml", dir);
    const err = await loadConfig(file, { env: {} }).catch((e) => e);
    // The problem in the included file is reported against that file.
    expect(formatProblem(err.problems[0])).toBe(`${join(dir, "catalog.yaml")}:3:43: model x/b: endpoint names unknown provider "nope" (declared: sim)`);
    writeFileSync(join(dir, "catalog.yaml"), `models:\n  x/a: { name: From catalog, endpoints: [{ provider: sim, model: a }] }\n  x/b: { name: B, endpoints: [{ provider: sim, model: b }] }\n`);
    const cfg = await loadConfig(file, { env: {} });
    expect(cfg.models.get("x/a")!.config.name).toBe("Override");
    expect(cfg.models.get("x/b")!.config.name).toBe("B");
  });

  it("expands ${VAR} only where a secret or a deployment setting goes; a reference anywhere else is refused", async () => {
    const env = { SECRET: "sk-live-from-the-environment", PORT: "9100" };
    const dir = mkdtempSync(join(tmpdir(), "mg-cfg-"));
    writeFileSync(join(dir, "catalog.yaml"), `models:\n  x/a:\n    description: "key \${SECRET}"\n    endpoints: [{ provider: sim, model: a }]\n`);
    const file = write(`include: [catalog.yaml]\nmodels:\n  x/b: { name: "\${SECRET:-n}", endpoints: [{ provider: sim, model: b }] }\n`, "gateway.yaml", dir);
    const err = await loadConfig(file, { env }).catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const where = "server, store, log, metrics, telemetry, routing, providers, mcp_servers, projects.<id>.providers, projects.<id>.mcp.servers and plugins.<name>.options";
    expect(err.problems.map(formatProblem)).toEqual([
      `${join(dir, "catalog.yaml")}:3:18: models.x/a.description: \${SECRET} is not expanded here; environment variables are read only in ${where}`,
      `${file}:3:16: models.x/b.name: \${SECRET:-n} is not expanded here; environment variables are read only in ${where}`,
    ]);
    expect(await problems(`projects:\n  p: { keys: [{ id: k, sha256: "\${HASH}" }] }\n`, { HASH })).toContain(
      `F:2:32: projects.p.keys.0.sha256: \${HASH} is not expanded here; environment variables are read only in ${where}`,
    );
    // Where it belongs it still expands; text that names no variable is not a reference.
    const ok = await loadConfig(write(`server: { port: "\${PORT}" }
providers:
  openai: { protocol: openai, api_key: "\${SECRET}", headers: { x-org: "\${SECRET}" } }
models:
  x/c: { description: "costs \${ in templates, $HOME too", endpoints: [{ provider: openai, model: c }] }
projects:
  p: { keys: [{ id: k, sha256: "${HASH}" }], providers: { openai: { api_key: "\${SECRET}" } } }
`), { env });
    expect(ok.server.port).toBe(9100);
    expect(ok.providers.get("openai")!.api_key).toBe(env.SECRET);
    expect(ok.providers.get("openai")!.headers).toEqual({ "x-org": env.SECRET });
    expect(ok.models.get("x/c")!.config.description).toBe("costs ${ in templates, $HOME too");
  });
});
