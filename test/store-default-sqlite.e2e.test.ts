// A gateway.yaml without store: keeps its state in the SQLite file ./data/gateway.db beside it (docs/policies.md):
// a project's spend, the ledger and API-created keys survive a restart. It ran on the memory store, so every restart
// gave every project its whole budget again, silently. check and start say which store they use and where.
import { afterAll, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { sha256Hex } from "../core/keys/keys.ts";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";
import { runCli } from "./helpers/cli.ts";
import { postJson } from "./helpers/gateway.ts";

const KEY = "mg_live_storedefault0000";
const ADMIN = "mg_admin_storedefault_read_01";

function configWithoutStore(): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "mg-store-default-"));
  const file = join(dir, "gw.yaml");
  writeFileSync(file, YAML.stringify({
    providers: { sim: { protocol: "sim" } },
    models: { "acme/m1": { endpoints: [{ provider: "sim", model: "echo", pricing: { input: "0.001", output: "0.001" } }] } },
    projects: { p1: { budget: { usd: "10", period: "month" }, keys: [{ id: "k1", sha256: sha256Hex(KEY) }] } },
    admin_keys: [{ id: "viewer", sha256: sha256Hex(ADMIN), scope: "read" }],
  }));
  return { dir, file };
}

async function spent(gw: ChildGateway): Promise<string> {
  const r = await fetch(`${gw.url}/admin/v1/budgets?project=p1`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const body = await r.json() as { projects: { project: string; budget: { spent_usd: string } }[] };
  expect(r.status, JSON.stringify(body)).toBe(200);
  return body.projects.find((p) => p.project === "p1")!.budget.spent_usd;
}

describe("a config file without store:", () => {
  const running: ChildGateway[] = [];
  afterAll(async () => {
    await Promise.all(running.map((g) => g.stop()));
  });

  it("check names the SQLite file beside the config, and creates nothing", async () => {
    const { dir, file } = configWithoutStore();
    const r = await runCli(["check", file]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`  store: sqlite ${join(dir, "data/gateway.db")} (the default: the config has no store: section)\n`);
    expect(existsSync(join(dir, "data"))).toBe(false);
  });

  it("keeps a project's spend across a restart, in ./data/gateway.db beside the config; start's banner names it", async () => {
    const { dir, file } = configWithoutStore();
    const first = await startChildGateway(file);
    running.push(first);
    expect(first.output()).toContain(`store: sqlite ${join(dir, "data/gateway.db")} (the default: the config has no store: section)`);
    const r = await postJson(`${first.baseURL}/chat/completions`, { model: "acme/m1", max_tokens: 16, messages: [{ role: "user", content: "hello" }] }, { authorization: `Bearer ${KEY}` });
    expect(r.status, r.text).toBe(200);
    const before = await spent(first);
    expect(Number(before)).toBeGreaterThan(0);
    await first.stop();
    expect(existsSync(join(dir, "data/gateway.db"))).toBe(true);

    const second = await startChildGateway(file);
    running.push(second);
    expect(await spent(second)).toBe(before);
  }, 60_000);

  it("--workers 2 is refused, saying the config runs on the default SQLite store and needs Redis", async () => {
    const { file } = configWithoutStore();
    const r = await runCli(["start", "--config", file, "--port", "0", "--workers", "2", "--no-watch"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("refusing to start: --workers 2 needs store: { kind: redis } — with no store: section the config runs on the sqlite store");
  }, 30_000);
});
