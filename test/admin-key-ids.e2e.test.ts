// Key ids shared between gateway.yaml and the admin API's store, and rotations that race, on a real gateway (SQLite
// store): gateway.yaml may not take an id an API-created key already has (reload and start refuse it, naming both);
// should a replica on an older gateway.yaml create one anyway, the admin API still reaches (and revokes) the stored
// key; one key has one successor however many rotations race; a gateway.yaml key's 409 names only commands that exist.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { startTestGateway, postJson, type TestGateway } from "./helpers/gateway.ts";
import { startGateway } from "../core/server.ts";
import { createLogger } from "../core/log.ts";
import { ConfigError, formatProblem } from "../core/config/source.ts";
import { sha256Hex } from "../core/keys/keys.ts";

const ADMIN = "mg_admin_key_ids_test_key_000001";
const YAML_KEY = "mg_live_key_ids_yaml_key_00001";
const LEGACY_KEY = "mg_live_key_ids_legacy_key_0001";
const chat = { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 5 };
const auth = (k: string) => ({ authorization: `Bearer ${k}` });

const config = (extraKeys = "") => `store: { kind: sqlite, path: ./data/gateway.db }
models: { "openai/gpt-4o-mini": { endpoints: [{ provider: sim, model: m }] } }
admin_keys:
  - { id: ops, sha256: "${sha256Hex(ADMIN)}", scope: write }
projects:
  acme:
    allow_models: ["*"]
    keys:
      - { id: team, sha256: "${sha256Hex(YAML_KEY)}" }
      - { id: legacy, sha256: "${sha256Hex(LEGACY_KEY)}" }
${extraKeys}`;

describe("key ids of gateway.yaml and of the admin API", () => {
  let gw: TestGateway;
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gw.url}/admin/v1${path}`, {
      method, headers: { ...auth(ADMIN), ...(body !== undefined ? { "content-type": "application/json" } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: (await res.json()) as any };
  };

  beforeAll(async () => {
    gw = await startTestGateway(config());
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("a reload that gives a gateway.yaml key the id of an API-created key is refused, naming both; the API key stays revocable", async () => {
    const created = await admin("POST", "/keys", { project: "acme", id: "ci" });
    expect(created.status).toBe(201);
    const good = readFileSync(gw.configFile, "utf8");
    const other = "mg_live_key_ids_unrelated_0001";
    try {
      writeFileSync(gw.configFile, config(`      - { id: ci, sha256: "${sha256Hex(other)}" }\n`));
      const reload = await gw.gateway.reload(gw.configFile);
      expect(reload.ok).toBe(false);
      const problems = (reload as { problems: string[] }).problems;
      expect(problems).toHaveLength(1);
      // Where the yaml key is, and which stored key has its id.
      expect(problems[0]).toMatch(/gateway\.yaml:11:\d+: project acme: key id ci of gateway\.yaml is already the id of a key created through the admin API \(acme\/ci, created .* by ops, active\)/);
      // Still the old config: the unrelated key is not accepted, and the API key is the one the API revokes.
      expect((await postJson(`${gw.baseURL}/chat/completions`, chat, auth(other))).status).toBe(401);
      const revoked = await admin("POST", "/keys/acme/ci/revoke");
      expect(revoked.status).toBe(200);
      expect(revoked.json).toMatchObject({ id: "ci", source: "api", status: "revoked" });
      expect((await postJson(`${gw.baseURL}/chat/completions`, chat, auth(created.json.key))).status).toBe(401);
    } finally {
      writeFileSync(gw.configFile, good);
      expect((await gw.gateway.reload(gw.configFile)).ok).toBe(true);
    }
  });

  it("should the ids meet anyway (a replica on an older gateway.yaml created the key), the admin API reads, changes and revokes the stored key", async () => {
    // What that replica's admin API wrote to the shared store: a key with the id of this gateway.yaml's key `legacy`.
    const key = "mg_live_key_ids_other_replica_1";
    expect(await gw.gateway.apiKeys.create({ sha256: sha256Hex(key), id: "legacy", project: "acme", sandbox: false, hint: key.slice(-4), createdAt: Date.now(), createdBy: "ops", expiresAt: null, revokedAt: null })).toBe(true);
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat, auth(key))).status).toBe(200);
    expect((await admin("GET", "/keys/acme/legacy")).json).toMatchObject({ id: "legacy", source: "api" });
    expect((await admin("PATCH", "/keys/acme/legacy", { name: "from the other replica" })).json).toMatchObject({ source: "api", name: "from the other replica" });
    const revoked = await admin("POST", "/keys/acme/legacy/revoke");
    expect(revoked.status).toBe(200);
    expect(revoked.json).toMatchObject({ source: "api", status: "revoked" });
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat, auth(key))).status).toBe(401);
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat, auth(LEGACY_KEY))).status).toBe(200); // gateway.yaml's key is untouched
  });

  it("concurrent rotations of one key: exactly one succeeds, the others are 409 naming its successor; a rotated key is not rotated again", async () => {
    expect((await admin("POST", "/keys", { project: "acme", id: "race" })).status).toBe(201);
    const answers = await Promise.all([1, 2, 3].map(() => admin("POST", "/keys/acme/race/rotate", { overlap_seconds: 600 })));
    const won = answers.filter((a) => a.status === 201);
    expect(won).toHaveLength(1);
    const successor = won[0]!.json.id;
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a.status).toBe(409);
      expect(a.json.error.message).toBe(`Key acme/race was already rotated to acme/${successor}: rotate ${successor} instead`);
    }
    const listed = (await admin("GET", "/keys?project=acme&source=api")).json.keys.filter((k: any) => k.id.startsWith("race"));
    expect(listed.map((k: any) => [k.id, k.status])).toEqual([["race", "active"], [successor, "active"]]);
    expect(listed[0].replaced_by).toBe(successor);
    expect((await admin("POST", "/keys/acme/race/rotate", {})).status).toBe(409);
    expect((await admin("POST", `/keys/acme/${successor}/rotate`, {})).status).toBe(201); // the chain goes on from the successor
  });

  it("PATCH of a gateway.yaml key is 409 telling to edit the file (model-gateway keys has no change command)", async () => {
    const r = await admin("PATCH", "/keys/acme/team", { name: "x" });
    expect(r.status).toBe(409);
    expect(r.json.error.message).toBe(`Key acme/team is declared in gateway.yaml: change it there (edit its entry under projects.acme.keys in ${gw.configFile}), then the gateway reloads it`);
    expect(r.json.error.message).not.toMatch(/keys change/);
    // revoke and rotate still name their (real) commands
    expect((await admin("POST", "/keys/acme/team/rotate", {})).json.error.message).toMatch(/model-gateway keys rotate --project acme --id team/);
  });
});

/** A command line a message names, run by a shell in `cwd` with this checkout's model-gateway: exit status and output. */
function runNamed(command: string, cwd: string): Promise<{ status: number; stdout: string; stderr: string }> {
  const line = command.replace(/^model-gateway /, `"${process.execPath}" "${resolve("bin/model-gateway.mjs")}" `);
  return new Promise((res) => {
    execFile("/bin/sh", ["-c", line], { cwd, env: { ...process.env, LOG_LEVEL: "silent" }, timeout: 60_000 }, (err, stdout, stderr) => {
      res({ status: err ? Number((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
    });
  });
}

it("the revoke 409 of a gateway.yaml key names a command that, run as given from any directory, revokes it in the gateway's file", async () => {
  const gw = await startTestGateway(config());
  try {
    const res = await fetch(`${gw.url}/admin/v1/keys/acme/team/revoke`, { method: "POST", headers: auth(ADMIN) });
    expect(res.status).toBe(409);
    const message = ((await res.json()) as any).error.message as string;
    const command = /\((model-gateway keys revoke [^)]*)\)/.exec(message)![1]!;
    // An operator's shell elsewhere: no gateway.yaml in this directory.
    const elsewhere = mkdtempSync(join(tmpdir(), "mg-keys-elsewhere-"));
    const ran = await runNamed(command, elsewhere);
    expect(ran.status, ran.stderr).toBe(0);
    expect(command).toContain(`--config ${gw.configFile}`); // the file the gateway loaded, not ./gateway.yaml of the shell
    expect((await gw.gateway.reload(gw.configFile)).ok).toBe(true);
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat, auth(YAML_KEY))).status).toBe(401);
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat, auth(LEGACY_KEY))).status).toBe(200);
  } finally {
    await gw.close();
  }
});

/** `model-gateway check FILE` as a child process: exit status and output. */
function check(file: string): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(process.execPath, [resolve("bin/model-gateway.mjs"), "check", file], { env: { ...process.env, LOG_LEVEL: "silent" }, timeout: 60_000 }, (err, stdout, stderr) => {
      res({ status: err ? Number((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
    });
  });
}

it("start and check refuse a gateway.yaml whose key id an API-created key of the store already has, naming both", async () => {
  const gw = await startTestGateway(config());
  const res = await fetch(`${gw.url}/admin/v1/keys`, { method: "POST", headers: { ...auth(ADMIN), "content-type": "application/json" }, body: JSON.stringify({ project: "acme", id: "ci" }) });
  expect(res.status).toBe(201);
  await gw.close();
  writeFileSync(gw.configFile, config(`      - { id: ci, sha256: "${sha256Hex("mg_live_key_ids_unrelated_0002")}" }\n`));
  // What the operator runs before deploying the file: the same refusal, exit 1.
  const checked = await check(gw.configFile);
  expect(checked.status, checked.stderr).toBe(1);
  expect(checked.stdout).toMatch(/gateway\.yaml:11:\d+: project acme: key id ci of gateway\.yaml is already the id of a key created through the admin API \(acme\/ci, created .* by ops, active\)/);
  const started = startGateway({ configFile: gw.configFile, port: 0, host: "127.0.0.1", metricsPort: 0, logger: createLogger("silent"), watch: false, sighup: false });
  const err = await started.then(async (g) => { await g.close(); return undefined; }, (e) => e);
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as ConfigError).problems.map(formatProblem)).toEqual([
    expect.stringMatching(/gateway\.yaml:11:\d+: project acme: key id ci of gateway\.yaml is already the id of a key created through the admin API \(acme\/ci, created .* by ops, active\)/),
  ]);
  // The file without it checks and starts (the store was released by the refused start).
  writeFileSync(gw.configFile, config());
  expect((await check(gw.configFile)).status).toBe(0);
  const again = await startGateway({ configFile: gw.configFile, port: 0, host: "127.0.0.1", metricsPort: 0, logger: createLogger("silent"), watch: false, sighup: false });
  await again.close();
});
