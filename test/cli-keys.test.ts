// `model-gateway keys list | new | revoke | rotate`, run as a real process: editing gateway.yaml in place (comments
// and layout kept, the result still a valid config whose keys a running gateway accepts after its reload), or calling
// a running gateway's admin API with --url.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import YAML from "yaml";
import { startTestGateway, postJson, keyEntry, type TestGateway } from "./helpers/gateway.ts";
import { CLI_BIN, runCli } from "./helpers/cli.ts";
import { sha256Hex } from "../core/keys/keys.ts";

const BIN = CLI_BIN;
const runSync = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, LOG_LEVEL: "silent" }, timeout: 30_000 });

const run = runCli;

const ADMIN = "mg_admin_cli_keys_test_key_00001";
const LIVE = "mg_live_cli_keys_existing_0001";
const chat = { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 5 };

function header(): string {
  return `# Operator notes: keep this comment.
server: { host: 127.0.0.1 }      # aligned on purpose
store: { kind: memory }
models: { "openai/gpt-4o-mini": { endpoints: [{ provider: sim, model: m }] } }
admin_keys:
  - { id: ops, sha256: "${sha256Hex(ADMIN)}", scope: write }
projects:
  acme:
    keys:
      # the team's key
      - { id: team, sha256: "${sha256Hex(LIVE)}" }   # do not remove
    allow_models: ["*"]
`;
}

describe("keys commands on gateway.yaml", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(header());
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("new adds the key in place, keeping every comment and line, and the reloaded gateway accepts it", async () => {
    const before = readFileSync(gw.configFile, "utf8");
    const r = await run(["keys", "new", "--config", gw.configFile, "--project", "acme", "--id", "ci", "--rpm", "30", "--budget", "12.50"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const key = r.stdout.split("\n")[0]!;
    expect(key).toMatch(/^mg_live_/);
    const after = readFileSync(gw.configFile, "utf8");
    expect(after).toBe(before.replace("   # do not remove\n", `   # do not remove\n      - { id: ci, sha256: "${sha256Hex(key)}", rate_limits: { rpm: 30 }, budget: { usd: "12.50" } }\n`));
    expect(runSync(["check", gw.configFile]).status).toBe(0);
    expect((await gw.gateway.reload()).ok).toBe(true);
    const served = await postJson(`${gw.baseURL}/chat/completions`, chat, { authorization: `Bearer ${key}` });
    expect(served.status).toBe(200);
    expect(served.headers.get("x-ratelimit-limit-requests")).toBe("30");
  });

  it("revoke and rotate edit the key's entry; list shows the file's keys with their status", async () => {
    const rot = await run(["keys", "rotate", "--config", gw.configFile, "--project", "acme", "--id", "team", "--overlap", "2h"]);
    expect(rot.status, rot.stderr).toBe(0);
    const newKey = rot.stdout.split("\n")[0]!;
    const doc = YAML.parse(readFileSync(gw.configFile, "utf8"));
    expect(doc.projects.acme.keys.map((k: any) => k.id)).toEqual(["team", "team-r2", "ci"]);
    expect(doc.projects.acme.keys[1].sha256).toBe(sha256Hex(newKey));
    const until = Date.parse(doc.projects.acme.keys[0].expires_at);
    expect(until).toBeGreaterThan(Date.now() + 7000_000);
    expect(until).toBeLessThan(Date.now() + 7300_000);
    expect(readFileSync(gw.configFile, "utf8")).toContain("# Operator notes: keep this comment.\n");

    expect((await run(["keys", "revoke", "--config", gw.configFile, "--project", "acme", "--id", "ci"])).status).toBe(0);
    expect(YAML.parse(readFileSync(gw.configFile, "utf8")).projects.acme.keys[2].revoked).toBe(true);
    const list = await run(["keys", "list", "--config", gw.configFile, "--json"]);
    const rows = JSON.parse(list.stdout);
    expect(rows.map((k: any) => [k.id, k.status])).toEqual([["team", "active"], ["team-r2", "active"], ["ci", "revoked"]]);
    expect(rows[2]).toMatchObject({ rate_limits: { rpm: 30 }, budget: { usd: "12.50" } });

    const missing = await run(["keys", "revoke", "--config", gw.configFile, "--project", "acme", "--id", "nobody"]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("project acme has no key nobody");
  });

  it("new --admin adds an admin key under admin_keys", async () => {
    const r = await run(["keys", "new", "--admin", "--scope", "read", "--id", "viewer", "--config", gw.configFile]);
    expect(r.status, r.stderr).toBe(0);
    const key = r.stdout.split("\n")[0]!;
    expect(key).toMatch(/^mg_admin_/);
    expect(YAML.parse(readFileSync(gw.configFile, "utf8")).admin_keys[1]).toEqual({ id: "viewer", sha256: sha256Hex(key), scope: "read" });
    expect((await gw.gateway.reload()).ok).toBe(true);
    const res = await fetch(`${gw.url}/admin/v1/keys`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    // A bad scope is one line naming the command once.
    const bad = await run(["keys", "new", "--admin", "--scope", "bogus", "--id", "x", "--config", gw.configFile]);
    expect(bad.status).toBe(2); // a bad option value: a usage error
    expect(bad.stderr).toBe("keys new --admin: --scope read or --scope write is required\n");
  });
});

describe("keys commands run at the same time on one gateway.yaml", () => {
  it("each keeps its key, readers never see the file empty or cut short, and a symlinked file stays a link with its mode", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-keys-race-"));
    const real = join(dir, "real.yaml");
    writeFileSync(real, header());
    chmodSync(real, 0o640);
    const file = join(dir, "gateway.yaml");
    symlinkSync(real, file);
    const ids = ["c1", "c2", "c3", "c4", "c5", "c6"];
    const torn: string[] = [];
    let done = false;
    const watcher = (async () => {
      // What a running gateway's config watch would read meanwhile.
      while (!done) {
        const text = readFileSync(file, "utf8");
        if (!YAML.parse(text)?.projects?.acme) torn.push(text);
        await new Promise((r) => setImmediate(r));
      }
    })();
    const runs = await Promise.all(ids.map((id) => run(["keys", "new", "--project", "acme", "--id", id, "--config", file])));
    done = true;
    await watcher;
    for (const r of runs) expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
    const inFile = (YAML.parse(readFileSync(file, "utf8")).projects.acme.keys as { id: string }[]).map((k) => k.id);
    expect(inFile.sort()).toEqual(["team", ...ids].sort());
    expect(torn).toEqual([]);
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
    expect(statSync(real).mode & 0o777).toBe(0o640);
    expect(readdirSync(dir).sort()).toEqual(["gateway.yaml", "real.yaml"]);
  });
});

describe("keys new and rotate on gateway.yaml beside a store with API-created keys", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(header().replace("store: { kind: memory }", "store: { kind: sqlite, path: ./data/gateway.db }"));
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("refuse an id an API-created key of the project already has (the gateway would refuse the reload), and edit nothing", async () => {
    const made = await fetch(`${gw.url}/admin/v1/keys`, {
      method: "POST", headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: JSON.stringify({ project: "acme", id: "ci" }),
    });
    expect(made.status).toBe(201);
    const before = readFileSync(gw.configFile, "utf8");
    const added = await run(["keys", "new", "--config", gw.configFile, "--project", "acme", "--id", "ci"]);
    expect(added.status).toBe(1);
    expect(added.stderr).toMatch(/^keys new: project acme already has a key ci, created through the admin API \(20\d\d-.* by ops\) and kept in the gateway's store: .*pass another --id\n$/);
    const rotated = await run(["keys", "rotate", "--config", gw.configFile, "--project", "acme", "--id", "team", "--new-id", "ci"]);
    expect(rotated.status).toBe(1);
    expect(rotated.stderr).toContain("project acme already has a key ci, created through the admin API");
    expect(rotated.stderr).toContain("pass another --new-id");
    expect(readFileSync(gw.configFile, "utf8")).toBe(before);
    // Another id is added as always, the serving gateway's store read beside it.
    const other = await run(["keys", "new", "--config", gw.configFile, "--project", "acme", "--id", "ci-yaml"]);
    expect(other.status, other.stderr).toBe(0);
    expect(other.stderr).toBe("");
    expect((await gw.gateway.reload()).ok).toBe(true);
  });
});

describe("keys commands on a running gateway (--url)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      store: { kind: "memory" },
      models: { "openai/gpt-4o-mini": { endpoints: [{ provider: "sim", model: "m" }] } },
      admin_keys: [keyEntry("ops", ADMIN, { scope: "write" })],
      projects: { acme: { keys: [keyEntry("team", LIVE)], allow_models: ["*"] } },
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("new, list, rotate and revoke through the admin API; the file is left alone", async () => {
    const file = readFileSync(gw.configFile, "utf8");
    const env = { MG_ADMIN_KEY: ADMIN };
    const made = await run(["keys", "new", "--url", gw.url, "--project", "acme", "--id", "remote", "--tpm", "5000"], env);
    expect(made.status, made.stderr).toBe(0);
    const key = made.stdout.split("\n")[0]!;
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat, { authorization: `Bearer ${key}` })).status).toBe(200);

    const list = await run(["keys", "list", "--url", gw.url, "--project", "acme"], env);
    expect(list.stdout).toMatch(/acme\s+remote\s+api\s+active\s+-\s+5000 tpm\s+20\d\d-/); // with its last use
    expect(list.stdout).toMatch(/acme\s+team\s+yaml\s+active/);

    const rot = await run(["keys", "rotate", "--url", gw.url, "--project", "acme", "--id", "remote", "--overlap", "0"], env);
    expect(rot.status, rot.stderr).toBe(0);
    const next = rot.stdout.split("\n")[0]!;
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat, { authorization: `Bearer ${key}` })).status).toBe(401);
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat, { authorization: `Bearer ${next}` })).status).toBe(200);
    expect((await run(["keys", "revoke", "--url", gw.url, "--project", "acme", "--id", "remote-r2"], env)).status).toBe(0);
    expect((await postJson(`${gw.baseURL}/chat/completions`, chat, { authorization: `Bearer ${next}` })).status).toBe(401);
    expect(readFileSync(gw.configFile, "utf8")).toBe(file);

    const denied = await run(["keys", "list", "--url", gw.url], { MG_ADMIN_KEY: "mg_admin_wrong_key_for_this_test_0" });
    expect(denied.status).toBe(1);
    expect(denied.stderr).toContain("HTTP 401 INVALID_API_KEY: Unknown admin key");
  });
});

describe("keys new without --config or --url", () => {
  it("prints the key and the line to paste, with its limits, and edits nothing", () => {
    const r = runSync(["keys", "new", "--project", "acme", "--id", "x", "--rpm", "5"]);
    expect(r.status).toBe(0);
    const key = r.stdout.split("\n")[0]!;
    expect(r.stdout).toContain(`- { id: x, sha256: "${sha256Hex(key)}", rate_limits: { rpm: 5 } }`);
  });
});

// gateway.yaml mounted on its own (Docker's `-v ./gateway.yaml:/app/gateway.yaml`) cannot be replaced by a rename
// (EBUSY), and a directory the command cannot write takes neither the lock nor a temporary file. Mounts need a mount
// namespace of their own: unshare -m, as root (CI runs as root).
const canMount = process.getuid?.() === 0 && spawnSync("unshare", ["-m", "true"]).status === 0;

describe.skipIf(!canMount)("keys --config on a gateway.yaml mounted as a single file (needs root and unshare -m)", () => {
  /** `keys ARGS` run in APP, where MOUNTS (shell commands) have put the host's files, in a mount namespace of its own. */
  const inMounts = (mounts: string[], app: string, args: string) =>
    spawnSync("unshare", ["-m", "bash", "-c", `set -e; mount --make-rprivate /; ${mounts.join("; ")}; cd ${app}; exec ${process.execPath} ${BIN} keys ${args}`],
      { encoding: "utf8", env: { ...process.env, LOG_LEVEL: "silent" }, timeout: 60_000 });
  const setup = () => {
    const root = mkdtempSync(join(tmpdir(), "mg-keys-mount-"));
    const host = join(root, "host"), app = join(root, "app");
    mkdirSync(host);
    mkdirSync(app);
    writeFileSync(join(host, "gateway.yaml"), header());
    writeFileSync(join(app, "gateway.yaml"), ""); // the mount point
    return { host, app };
  };

  it("new adds the key through the mount (written in place), in one piece, and leaves no lock or temp file", () => {
    const { host, app } = setup();
    const r = inMounts([`mount --bind ${host}/gateway.yaml ${app}/gateway.yaml`], app, "new --project acme --id bound --config gateway.yaml");
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
    const key = r.stdout.split("\n")[0]!;
    const text = readFileSync(join(host, "gateway.yaml"), "utf8");
    expect(text).toBe(header().replace("   # do not remove\n", `   # do not remove\n      - { id: bound, sha256: "${sha256Hex(key)}" }\n`));
    expect(readdirSync(app)).toEqual(["gateway.yaml"]);
    expect(readdirSync(host)).toEqual(["gateway.yaml"]);
  });

  it("in a directory it cannot write, the edit takes its lock in the temp directory and writes in place; a read-only file is one line, exit 1", () => {
    const { host, app } = setup();
    // The directory read-only, the file itself writable through a mount of its own.
    const roDir = [`mount --bind ${host} ${app}`, `mount -o remount,bind,ro ${app}`, `mount --bind ${host}/gateway.yaml ${app}/gateway.yaml`];
    const r = inMounts(roDir, app, "revoke --project acme --id team --config gateway.yaml");
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
    expect(YAML.parse(readFileSync(join(host, "gateway.yaml"), "utf8")).projects.acme.keys[0].revoked).toBe(true);
    expect(readdirSync(host)).toEqual(["gateway.yaml"]);

    const before = readFileSync(join(host, "gateway.yaml"), "utf8");
    const ro = inMounts([`mount --bind ${host} ${app}`, `mount -o remount,bind,ro ${app}`], app, "new --project acme --id nope --config gateway.yaml");
    expect(ro.status).toBe(1);
    expect(ro.stderr).toMatch(/^keys new: cannot write \S*gateway\.yaml: read-only file system \(EROFS\)\n$/);
    expect(readFileSync(join(host, "gateway.yaml"), "utf8")).toBe(before);
  });
});
