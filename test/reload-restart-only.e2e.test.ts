// Settings read only at start (core/config/restart-only.ts) edited on a running gateway: the reload reports them as
// waiting for a restart, and until then the gateway keeps running with the ones it started with. `log: { access:
// false }` used to stop request lines at once, and a changed server.assets_dir got new images while the next
// restart would look in the old one (breaking links signed meanwhile).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";
import type { RunningGateway } from "../core/server.ts";

const KEY = testKey("restartonly", true);
const startDir = mkdtempSync(join(tmpdir(), "mg-assets-start-"));
const editedDir = mkdtempSync(join(tmpdir(), "mg-assets-edited-"));
const config = (server: Record<string, unknown>, log: Record<string, unknown>) => {
  const c = mediaConfig({ server }) as Record<string, any>;
  c.projects.p = { keys: [keyEntry("k", KEY)] };
  return { ...c, log };
};
let gw: RunningGateway;
let log: CapturedLog;
let baseURL: string;
let configFile: string;

async function reloadTo(server: Record<string, unknown>, logSection: Record<string, unknown>) {
  writeFileSync(configFile, YAML.stringify(config(server, logSection)));
  const outcome = await gw.gateway.reload(configFile);
  expect(outcome.ok).toBe(true);
}

beforeAll(async () => {
  let dir: string;
  ({ gw, log, baseURL, dir } = await startLoggedGateway(config({ assets_dir: startDir }, { access: true })));
  configFile = join(dir, "gateway.yaml");
});
afterAll(async () => {
  await gw?.close();
  rmSync(startDir, { recursive: true, force: true });
  rmSync(editedDir, { recursive: true, force: true });
});

describe("a restart-only setting edited live", () => {
  it("log.access: false waits for the restart: request lines are still written meanwhile", async () => {
    await reloadTo({ assets_dir: startDir }, { access: false });
    expect(gw.gateway.restartPending).toEqual(["log"]);
    const r = await postJson(`${baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
    const requestId = r.headers.get("x-request-id");
    expect(await log.accessOnce((l) => l.requestId === requestId, 1)).toHaveLength(1);
    const unrouted = await fetch(`${baseURL}/no-such-path`, { headers: { "x-request-id": "req_unrouted_after_reload" } });
    expect(unrouted.status).toBe(404);
    expect(await log.accessOnce((l) => l.requestId === "req_unrouted_after_reload", 1)).toHaveLength(1);
  });

  it("server.assets_dir waits for the restart: an image made after the edit is kept where the gateway started keeping them", async () => {
    await reloadTo({ assets_dir: editedDir }, { access: true });
    expect(gw.gateway.restartPending).toEqual(["server.assets_dir"]);
    const r = await postJson(`${baseURL}/images/generations`, { model: "sim/pixel", prompt: "a dog", response_format: "url" }, auth(LIVE));
    expect(r.status, r.text).toBe(200);
    expect((await fetch(r.json.data[0].url)).status).toBe(200);
    expect(readdirSync(editedDir)).toEqual([]);
    expect(readdirSync(startDir).length).toBeGreaterThan(0);
  });
});
