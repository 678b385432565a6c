// `model-gateway keys`, run as a real process: what an operator (or a script reading --json) sees when the file,
// an option or a subcommand is wrong.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../../test/helpers/cli.ts";
import { startTestGateway, type TestGateway } from "../../test/helpers/gateway.ts";
import { sha256Hex } from "./keys.ts";

const ADMIN = "mg_admin_keys_command_test_0001";

function config(keys: string): string {
  return `store: { kind: memory }
models: { "openai/gpt-4o-mini": { endpoints: [{ provider: sim, model: m }] } }
admin_keys:
  - { id: ops, sha256: "${sha256Hex(ADMIN)}", scope: write }
projects:
  demo:
    allow_models: ["*"]
    keys:
${keys}`;
}

const KEYS = `      - { id: ci, sha256: "${"a".repeat(64)}", rate_limits: { rpm: 30 }, budget: { usd: "12.50", period: day } }
      - { id: old, sha256: "${"b".repeat(64)}", expires_at: "2099-01-01T00:00:00Z", revoked: true }
`;

function file(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "mg-keys-"));
  const f = join(dir, "gateway.yaml");
  writeFileSync(f, text);
  return f;
}

describe("keys list --config", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(config(KEYS));
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("gives a file's keys the fields the admin API gives them, those the file cannot know null", async () => {
    const fromFile = await runCli(["keys", "list", "--config", gw.configFile, "--json"]);
    expect(fromFile.stderr).toBe("");
    expect(fromFile.status).toBe(0);
    const fromApi = await runCli(["keys", "list", "--url", gw.url, "--json"], { MG_ADMIN_KEY: ADMIN });
    expect(fromApi.status, fromApi.stderr).toBe(0);
    // The gateway has served no request: last_used_at is null in both.
    expect(JSON.parse(fromFile.stdout)).toEqual(JSON.parse(fromApi.stdout));
    expect(JSON.parse(fromFile.stdout)[0]).toEqual({
      project: "demo", id: "ci", source: "yaml", status: "active", name: null, sandbox: null, hint: null, created_at: null, created_by: null,
      expires_at: null, revoked_at: null, revoked_reason: null, rate_limits: { rpm: 30 }, budget: { usd: "12.50", period: "day" },
      rotated_from: null, replaced_by: null, last_used_at: null,
    });
  });

  it("refuses a file check refuses, with its problems, instead of listing garbage", async () => {
    const f = file(config(`      - { id: ci, sha256: "${"a".repeat(64)}", budget: 7, expires_at: 5 }\n`));
    const r = await runCli(["keys", "list", "--config", f]);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(`${f}:9:118: projects.demo.keys.0.expires_at: must be string\n${f}:9:103: projects.demo.keys.0.budget: must be object\n`);
    expect(r.status).toBe(1);
  });

  it("lists a production file whose secrets are not in this shell, and still reports a problem in its keys", async () => {
    // The form the gateway's own warning recommends, the variables unset here (as in an operator's shell).
    const production = (keys: string) => config(keys).replace("store: { kind: memory }\n", `store: { kind: redis, url: "\${MG_T_REDIS_URL}" }
server: { signing_secret: "\${MG_T_SIGNING_SECRET}", port: "\${MG_T_PORT}" }
metrics: { token: "\${MG_T_METRICS_TOKEN}" }
`);
    const r = await runCli(["keys", "list", "--config", file(production(KEYS)), "--json"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).map((k: { id: string; status: string }) => `${k.id} ${k.status}`)).toEqual(["ci active", "old revoked"]);
    const f = file(production(`      - { id: ci, sha256: "${"a".repeat(64)}", budget: 7 }\n`));
    const bad = await runCli(["keys", "list", "--config", f]);
    expect(bad.stderr).toBe(`${f}:11:103: projects.demo.keys.0.budget: must be object\n`);
    expect(bad.status).toBe(1);
  });

  it("a project not declared is an error from the file as from the admin API (exit 1), not an empty table", async () => {
    const fromFile = await runCli(["keys", "list", "--config", gw.configFile, "--project", "nosuch"]);
    expect({ stdout: fromFile.stdout, stderr: fromFile.stderr, status: fromFile.status })
      .toEqual({ stdout: "", stderr: `keys list: project nosuch is not declared in ${gw.configFile}\n`, status: 1 });
    const fromApi = await runCli(["keys", "list", "--url", gw.url, "--project", "nosuch"], { MG_ADMIN_KEY: ADMIN });
    expect(fromApi.stderr).toMatch(/HTTP 404 /);
    expect(fromApi.status).toBe(1);
  });

  it("names a directory given as the file, like every other command, without a stack", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-keys-dir-"));
    const r = await runCli(["keys", "list", "--config", dir]);
    expect(r.stderr).toBe(`${dir}:1:1: cannot read config file: EISDIR: illegal operation on a directory, read\n`);
    expect(r.stdout).toBe("");
    expect(r.status).toBe(1);
  });
});

describe("keys rotate --overlap", () => {
  it("refuses an overlap longer than the admin API's 30 days, naming --overlap (exit 2), the file unchanged", async () => {
    const f = file(config(KEYS));
    const before = readFileSync(f, "utf8");
    for (const overlap of ["99999999999d", "31d", "2592001", "9".repeat(400)]) {
      const r = await runCli(["keys", "rotate", "--project", "demo", "--id", "ci", "--overlap", overlap, "--config", f]);
      expect(r.stderr).toBe(`keys rotate: --overlap ${overlap} is longer than 30 days (2592000 s), the most the admin API takes\n`);
      expect(r.stdout).toBe("");
      expect(r.status).toBe(2);
      expect(readFileSync(f, "utf8")).toBe(before);
    }
    const most = await runCli(["keys", "rotate", "--project", "demo", "--id", "ci", "--overlap", "30d", "--expires", "9999-12-31", "--config", f]);
    expect(most.stderr).toBe("");
    expect(most.status).toBe(0);
    expect(most.stdout).toContain("demo/ci-r2 expires at 9999-12-31T00:00:00Z; demo/ci now expires at ");
  });
});

describe("keys usage errors exit 2 and name what is wrong", () => {
  it("an unknown or missing subcommand", async () => {
    const r = await runCli(["keys", "foo"]);
    expect(r.stderr).toMatch(/^keys: unknown subcommand "foo" \(list, new, revoke or rotate\)\nUsage:\n/);
    expect(r.status).toBe(2);
    const none = await runCli(["keys"]);
    expect(none.stderr).toMatch(/^keys: which one\? list, new, revoke or rotate\nUsage:\n/);
    expect(none.status).toBe(2);
  });

  it("a bad option value", async () => {
    const f = file(config(KEYS));
    const before = readFileSync(f, "utf8");
    const cases: [string[], string][] = [
      [["new", "--project", "demo", "--rpm", "0"], "keys new: --rpm must be a whole number of at least 1 (got 0)\n"],
      [["new", "--project", "demo", "--budget", "abc"], "keys new: --budget abc is not an amount in USD (like 25 or 2.50)\n"],
      [["new", "--project", "demo", "--expires", "tomorrow"], "keys new: --expires tomorrow is not a date: expected ISO 8601 (2030-01-01, 2030-01-01T12:00:00Z; UTC unless it has an offset)\n"],
      [["rotate", "--project", "demo", "--id", "ci", "--overlap", "1x"], "keys rotate: --overlap 1x: write 3600, 30m, 1h or 2d\n"],
      [["rotate", "--project", "demo", "--id", "ci", "--expires", "2020-01-01"], "keys rotate: --expires 2020-01-01 is in the past (2020-01-01T00:00:00Z): the key would be expired on creation\n"],
      [["new", "--admin", "--scope", "bogus"], "keys new --admin: --scope read or --scope write is required\n"],
    ];
    for (const [args, said] of cases) {
      const r = await runCli(["keys", ...args, "--config", f]);
      expect({ args, stderr: r.stderr, status: r.status }).toEqual({ args, stderr: said, status: 2 });
    }
    const urls: [string[], string][] = [
      [["list", "--url", "notaurl"], "keys list: --url notaurl is not an http:// or https:// URL (like http://127.0.0.1:8787)\n"],
      [["revoke", "--project", "demo", "--id", "ci", "--url", "ftp://h/"], "keys revoke: --url ftp://h/ is not an http:// or https:// URL (like http://127.0.0.1:8787)\n"],
    ];
    for (const [args, said] of urls) {
      const r = await runCli(["keys", ...args], { MG_ADMIN_KEY: ADMIN });
      expect({ args, stderr: r.stderr, status: r.status }).toEqual({ args, stderr: said, status: 2 });
    }
    expect(readFileSync(f, "utf8")).toBe(before);
  });

  it("a failure that is not the command line's stays exit 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-keys-none-"));
    mkdirSync(join(dir, "sub"));
    const missing = await runCli(["keys", "revoke", "--project", "demo", "--id", "ci", "--config", join(dir, "nope.yaml")]);
    expect(missing.stderr).toBe(`keys revoke: ${join(dir, "nope.yaml")} does not exist\n`);
    expect(missing.status).toBe(1);
    const f = file(config(KEYS));
    const nobody = await runCli(["keys", "revoke", "--project", "demo", "--id", "nobody", "--config", f]);
    expect(nobody.stderr).toBe("keys revoke: project demo has no key nobody in this file\n");
    expect(nobody.status).toBe(1);
  });
});
