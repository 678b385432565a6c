// `model-gateway keys rotate --config` under the admin API's rules (docs/admin-api.md, Rotate): a key has one
// successor, an expired or revoked key is not rotated, and the new key never inherits the retiring key's overlap end.
// Run as a real process on a gateway.yaml that a running gateway reloads; the file it writes stays loadable by the
// release before (the pair recorded in comments, not in fields that release's schema refuses).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { startTestGateway, postJson, keyEntry, type TestGateway } from "./helpers/gateway.ts";
import { runCli } from "./helpers/cli.ts";
import { sha256Hex } from "../core/keys/keys.ts";
import { Ajv, addFormats } from "../core/ajv.ts";
import previousKeySchema from "./fixtures/key-entry-previous-release.schema.json" with { type: "json" };


const run = runCli;

const CLI1 = "mg_live_cli_keys_rotate_cli1_0001";
const ADMIN = "mg_admin_cli_keys_rotate_test_0001";
const chat = { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 5 };

const config = (keys: string) => `store: { kind: memory }
admin_keys: [{ id: ops, sha256: "${sha256Hex(ADMIN)}", scope: write }]
models: { "openai/gpt-4o-mini": { endpoints: [{ provider: sim, model: m }] } }
projects:
  demo:
    allow_models: ["*"]
    keys:
${keys}`;

const keysOf = (file: string) => YAML.parse(readFileSync(file, "utf8")).projects.demo.keys as Record<string, unknown>[];

/** The key entries of `file` the previous release's schema refuses (its key entries allow no field it does not know). */
const previousRelease = (() => {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  return ajv.compile(previousKeySchema);
})();
const refusalByPreviousRelease = (k: Record<string, unknown>): string | undefined => {
  const id = String(k.id);
  return previousRelease(k) ? undefined : `${id}: ${previousRelease.errors?.map((e) => `${e.message} ${JSON.stringify(e.params)}`).join("; ")}`;
};
const refusedByPreviousRelease = (file: string) => keysOf(file).map(refusalByPreviousRelease).filter((r) => r !== undefined);
const lineOf = (file: string, id: string) => readFileSync(file, "utf8").split("\n").find((l) => l.includes(`id: ${id},`)) ?? "";

describe("keys rotate --config on a key already rotated", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(config(`      - { id: cli1, sha256: "${sha256Hex(CLI1)}" }\n`));
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("refuses a second rotation naming the successor, edits nothing; no successor takes the overlap end as its expiry", async () => {
    const first = await run(["keys", "rotate", "--project", "demo", "--id", "cli1", "--overlap", "90", "--config", gw.configFile]);
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    const r2 = first.stdout.split("\n")[0]!;
    const [cli1, cli1r2] = keysOf(gw.configFile);
    // The successor has no expiry (cli1 had none of its own): not cli1's overlap end.
    expect(cli1r2).toEqual({ id: "cli1-r2", sha256: sha256Hex(r2) });
    expect(Object.keys(cli1!).sort()).toEqual(["expires_at", "id", "sha256"]);
    // The pair is in comments, which the release before ignores: it still loads the file (its schema refuses an
    // unknown field, so a replaced_by there made it refuse every reload and its `check` fail).
    expect(lineOf(gw.configFile, "cli1")).toMatch(/ # rotated to cli1-r2$/);
    expect(lineOf(gw.configFile, "cli1-r2")).toMatch(/ # rotated from cli1$/);
    expect(refusedByPreviousRelease(gw.configFile)).toEqual([]);
    // The running gateway takes the file: both keys are served through the overlap.
    expect((await gw.gateway.reload()).ok).toBe(true);
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat, { authorization: `Bearer ${CLI1}` })).status).toBe(200);
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat, { authorization: `Bearer ${r2}` })).status).toBe(200);
    // The admin API (and the console) show the pair as they show a stored key's.
    const listed = await (await fetch(`${gw.url}/admin/v1/keys?project=demo`, { headers: { authorization: `Bearer ${ADMIN}` } })).json();
    expect(listed.keys.map((k: any) => [k.id, k.replaced_by, k.rotated_from])).toEqual([["cli1", "cli1-r2", null], ["cli1-r2", null, "cli1"]]);
    // Rotating cli1 there (the console's Rotate button) says it was rotated and names the successor to rotate.
    const api = await fetch(`${gw.url}/admin/v1/keys/demo/cli1/rotate`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: "{}" });
    const refused = await api.json();
    expect(api.status).toBe(409);
    expect(refused.error.message).toBe(`Key demo/cli1 was already rotated to demo/cli1-r2: rotate cli1-r2 instead, in gateway.yaml (model-gateway keys rotate --project demo --id cli1-r2 --config ${gw.configFile})`);
    expect(refused.error.details).toEqual({ project: "demo", id: "cli1", source: "yaml", replaced_by: "cli1-r2" });

    const before = readFileSync(gw.configFile, "utf8");
    const again = await run(["keys", "rotate", "--project", "demo", "--id", "cli1", "--overlap", "1h", "--config", gw.configFile]);
    expect(again.stderr).toBe("keys rotate: key demo/cli1 was already rotated to demo/cli1-r2: rotate cli1-r2 instead\n");
    expect(again.stdout).toBe("");
    expect(again.status).toBe(1);
    expect(readFileSync(gw.configFile, "utf8")).toBe(before);

    // The successor rotates as any key: its own successor is cli1-r3, again without an inherited overlap end.
    const next = await run(["keys", "rotate", "--project", "demo", "--id", "cli1-r2", "--config", gw.configFile]);
    expect(next.status, next.stderr).toBe(0);
    expect(keysOf(gw.configFile).map((k) => [k.id, "expires_at" in k])).toEqual([["cli1", true], ["cli1-r2", true], ["cli1-r3", false]]);
    expect(lineOf(gw.configFile, "cli1-r2")).toMatch(/ # rotated from cli1; rotated to cli1-r3$/);
    expect(lineOf(gw.configFile, "cli1-r3")).toMatch(/ # rotated from cli1-r2$/);
    expect(refusedByPreviousRelease(gw.configFile)).toEqual([]);
    expect((await gw.gateway.reload()).ok).toBe(true);
  });
});

describe("keys rotate --config refuses what the admin API refuses", () => {
  const file = (keys: string) => {
    const f = join(mkdtempSync(join(tmpdir(), "mg-keys-rotate-")), "gateway.yaml");
    writeFileSync(f, config(keys));
    return f;
  };
  const rotate = (f: string, id: string) => run(["keys", "rotate", "--project", "demo", "--id", id, "--config", f]);

  it("an expired key: no successor born expired", async () => {
    const f = file(`      - { id: gone, sha256: "${"a".repeat(64)}", expires_at: "2020-01-01T00:00:00Z" }\n`);
    const before = readFileSync(f, "utf8");
    const r = await rotate(f, "gone");
    expect(r.stderr).toBe("keys rotate: key demo/gone has expired (2020-01-01T00:00:00Z): create a new key instead\n");
    expect(r.status).toBe(1);
    expect(readFileSync(f, "utf8")).toBe(before);
  });

  it("a key beside a later id of its chain and no record (an earlier release's rotation, or a key of its own): asks for --expires, never says it was rotated", async () => {
    const until = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, "Z");
    // Two regions' keys, each with its own expiry: eu-r2 is no successor of eu-r1, but nothing in the file says so.
    const f = file(`      - { id: eu-r1, sha256: "${"a".repeat(64)}", expires_at: "${until}" }\n      - { id: eu-r2, sha256: "${"b".repeat(64)}", expires_at: "2099-01-01T00:00:00Z" }\n`);
    const before = readFileSync(f, "utf8");
    const r = await rotate(f, "eu-r1");
    expect(r.stderr).toBe(`keys rotate: key demo/eu-r1 has an expires_at (${until}) that the new key would take, but demo/eu-r2 looks like the successor ` +
      `of an earlier rotation of it that left no record, which would make ${until} that rotation's overlap end: pass --expires DATE ` +
      `for the new key (--expires ${until} if it is eu-r1's own; if eu-r1 was rotated to eu-r2, rotate eu-r2 instead)\n`);
    expect(r.status).toBe(1);
    expect(readFileSync(f, "utf8")).toBe(before);
    // With the expiry said, eu-r1 rotates (eu-r2 untouched).
    const given = await run(["keys", "rotate", "--project", "demo", "--id", "eu-r1", "--expires", until, "--config", f]);
    expect(given.status, given.stderr).toBe(0);
    expect(keysOf(f).map((k) => [k.id, k.expires_at])).toEqual([["eu-r1", until], ["eu-r3", until], ["eu-r2", "2099-01-01T00:00:00Z"]]);
  });

  it("a file written by the release that recorded the pair in fields is still read: a second rotation is refused", async () => {
    const f = file(`      - { id: team, sha256: "${"a".repeat(64)}", expires_at: "2099-01-01T00:00:00Z", replaced_by: x9 }\n      - { id: x9, sha256: "${"b".repeat(64)}", rotated_from: team }\n`);
    const r = await rotate(f, "team");
    expect(r.stderr).toBe("keys rotate: key demo/team was already rotated to demo/x9: rotate x9 instead\n");
    expect(r.status).toBe(1);
  });

  it("a key with an expiry of its own passes it to its successor, as the API does", async () => {
    const f = file(`      - { id: ci, sha256: "${"a".repeat(64)}", expires_at: "2099-01-01T00:00:00Z", rate_limits: { rpm: 7 } }\n`);
    const r = await rotate(f, "ci");
    expect(r.status, r.stderr).toBe(0);
    const [ci, ciR2] = keysOf(f);
    expect(ciR2).toEqual({ id: "ci-r2", sha256: expect.any(String), expires_at: "2099-01-01T00:00:00Z", rate_limits: { rpm: 7 } });
    expect(Date.parse(String(ci!.expires_at))).toBeLessThan(Date.parse("2099-01-01T00:00:00Z"));
  });
});

describe("keys rotate --expires", () => {
  let gw: TestGateway;
  const WRITE = "mg_admin_cli_keys_rotate_write_0001";
  beforeAll(async () => {
    gw = await startTestGateway({
      store: { kind: "memory" },
      models: { "openai/gpt-4o-mini": { endpoints: [{ provider: "sim", model: "m" }] } },
      admin_keys: [keyEntry("ops", WRITE, { scope: "write" })],
      projects: { demo: { keys: [keyEntry("ci", CLI1, { expires_at: "2099-01-01T00:00:00Z" })], allow_models: ["*"] } },
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("gives the new key that expiry in gateway.yaml, not the retiring key's", async () => {
    const r = await run(["keys", "rotate", "--project", "demo", "--id", "ci", "--expires", "2031-06-01", "--config", gw.configFile]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("demo/ci-r2 expires at 2031-06-01T00:00:00Z");
    expect(keysOf(gw.configFile)[1]).toMatchObject({ id: "ci-r2", expires_at: "2031-06-01T00:00:00Z" });
  });

  it("refuses an expiry before the retiring key's overlap end (exit 2), the file left as it was", async () => {
    const soon = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10); // before a 2-day overlap ends
    const before = readFileSync(gw.configFile, "utf8");
    const r = await run(["keys", "rotate", "--project", "demo", "--id", "ci-r2", "--overlap", "3d", "--expires", soon, "--config", gw.configFile]);
    expect(r.stderr).toMatch(new RegExp(`^keys rotate: --expires ${soon}T00:00:00Z is before the end of the overlap \\(\\S+Z\\), when demo/ci-r2 stops working: ` +
      "the new key would expire while the key it replaces still works; give a later date or a shorter --overlap\n$"));
    expect(r.status).toBe(2);
    expect(readFileSync(gw.configFile, "utf8")).toBe(before);
  });

  it("refuses an expiry before the overlap end through the admin API (--url): 400 naming expires_at, exit 2", async () => {
    const env = { MG_ADMIN_KEY: WRITE };
    const made = await run(["keys", "new", "--url", gw.url, "--project", "demo", "--id", "short", "--expires", "2099-01-01"], env);
    expect(made.status, made.stderr).toBe(0);
    const soon = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const r = await run(["keys", "rotate", "--url", gw.url, "--project", "demo", "--id", "short", "--overlap", "3d", "--expires", soon], env);
    expect(r.stderr).toMatch(/HTTP 400 INVALID_REQUEST: Invalid request: expires_at \(\S+\) is before the end of the overlap \(\S+\), when demo\/short stops working/);
    expect(r.status).toBe(2);
    const api = await fetch(`${gw.url}/admin/v1/keys/demo/short/rotate`, {
      method: "POST", headers: { authorization: `Bearer ${WRITE}`, "content-type": "application/json" }, body: JSON.stringify({ overlap_seconds: 259_200, expires_at: `${soon}T00:00:00Z` }),
    });
    expect(api.status).toBe(400);
    expect((await api.json()).error.param).toBe("expires_at");
    // Nothing was rotated: the key has no successor.
    const listed = await (await fetch(`${gw.url}/admin/v1/keys/demo/short`, { headers: { authorization: `Bearer ${WRITE}` } })).json();
    expect(listed.replaced_by).toBeNull();
  });

  it("gives the new key that expiry through the admin API (--url)", async () => {
    const env = { MG_ADMIN_KEY: WRITE };
    const made = await run(["keys", "new", "--url", gw.url, "--project", "demo", "--id", "remote", "--expires", "2099-01-01"], env);
    expect(made.status, made.stderr).toBe(0);
    const r = await run(["keys", "rotate", "--url", gw.url, "--project", "demo", "--id", "remote", "--expires", "2031-06-01"], env);
    expect(r.status, r.stderr).toBe(0);
    const listed = await (await fetch(`${gw.url}/admin/v1/keys/demo/remote-r2`, { headers: { authorization: `Bearer ${WRITE}` } })).json();
    expect(listed.expires_at).toBe("2031-06-01T00:00:00.000Z");
  });
});

describe("the admin API's rotate on a gateway.yaml key already rotated", () => {
  let gw: TestGateway;
  const A = "a".repeat(64), B = "b".repeat(64), C = "c".repeat(64), D = "d".repeat(64);
  beforeAll(async () => {
    // As `keys rotate --config` records the pair (comments), and as the release that wrote fields did.
    gw = await startTestGateway(config(`      - { id: team, sha256: "${A}", expires_at: "2099-01-01T00:00:00Z" }  # rotated to team-r2
      - { id: team-r2, sha256: "${B}" }  # rotated from team
      - { id: old, sha256: "${C}", expires_at: "2099-01-01T00:00:00Z", replaced_by: new }
      - { id: new, sha256: "${D}", rotated_from: old }
`));
  });
  afterAll(async () => {
    await gw?.close();
  });
  const rotateThere = (id: string) =>
    fetch(`${gw.url}/admin/v1/keys/demo/${id}/rotate`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: "{}" });

  it("answers 409 saying it was rotated and naming its successor, not the command the CLI would refuse", async () => {
    for (const [id, by] of [["team", "team-r2"], ["old", "new"]] as const) {
      const r = await rotateThere(id);
      const body = await r.json();
      expect(r.status).toBe(409);
      expect(body.error.message).toBe(`Key demo/${id} was already rotated to demo/${by}: rotate ${by} instead, in gateway.yaml (model-gateway keys rotate --project demo --id ${by} --config ${gw.configFile})`);
      expect(body.error.details).toEqual({ project: "demo", id, source: "yaml", replaced_by: by });
    }
    // A key not rotated still gets the command to rotate it in the file.
    const r = await rotateThere("team-r2");
    expect(r.status).toBe(409);
    expect((await r.json()).error.message).toBe(`Key demo/team-r2 is declared in gateway.yaml: rotate it there (model-gateway keys rotate --project demo --id team-r2 --config ${gw.configFile}), then the gateway reloads it`);
  });
});
