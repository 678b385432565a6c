// gateway.yaml's log: section, through the real server start (no injected logger): file, access on/off.
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { startGateway } from "../core/server.ts";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "./helpers/shipped-config.ts";
import { startChildGateway } from "./helpers/child-gateway.ts";
import { startFakeOpenAI } from "./upstreams/openai.ts";

const KEY = testKey("logcfg", true);

async function run(log: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), "mg-logcfg-"));
  const configFile = join(dir, "gateway.yaml");
  writeFileSync(configFile, YAML.stringify({
    log,
    store: { kind: "memory" },
    models: { "openai/gpt-4o-mini": { endpoints: [{ provider: "sim", model: "m" }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  }));
  const gw = await startGateway({ configFile, port: 0, host: "127.0.0.1" });
  const r = await postJson(`${gw.url}/api/v1/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}`, "x-request-id": "req-logcfg" });
  expect(r.status).toBe(200);
  await gw.close(); // flushes and closes the log file
  return readFileSync(join(dir, "logs", "gw.log"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

describe("log: in gateway.yaml", () => {
  it("file (relative to the config) gets JSON lines, the access line among them; the key never", async () => {
    const lines = await run({ level: "info", file: "logs/gw.log" });
    const access = lines.filter((l) => l.msg === "request");
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ requestId: "req-logcfg", status: 200, project: "p", keyId: "k", provider: "sim" });
    expect(JSON.stringify(lines)).not.toContain(KEY);
  });

  it("access: false drops the access line", async () => {
    const lines = await run({ level: "debug", access: false, file: "logs/gw.log" });
    expect(lines.filter((l) => l.msg === "request")).toEqual([]);
  });

  it("the shipped gateway (model-gateway start) writes every access line by the end of a graceful shutdown (they are written in batches)", async () => {
    const upstream = await startFakeOpenAI({ text: "a short answer" });
    const dir = mkdtempSync(join(tmpdir(), "mg-logcfg-"));
    const config = shippedConfig({ openai: upstream.baseUrl, anthropic: upstream.baseUrl });
    config.log = { file: "logs/gw.log" }; // level and access as shipped (info, on)
    const configFile = join(dir, "gateway.yaml");
    writeFileSync(configFile, YAML.stringify(config));
    const gw = await startChildGateway(configFile, providerEnv(config));
    try {
      const ids = Array.from({ length: 120 }, (_, i) => `req-batch-${i}`);
      // Fewer lines than one batch: without the flush on shutdown they would still be in memory at SIGTERM.
      for (let i = 0; i < ids.length; i += 20) {
        const answers = await Promise.all(ids.slice(i, i + 20).map((id, j) => postJson(`${gw.baseURL}/chat/completions`,
          { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }], stream: j % 2 === 1 },
          { authorization: `Bearer ${SHIPPED_KEY}`, "x-request-id": id })));
        for (const a of answers) expect(a.status).toBe(200);
      }
      await gw.stop(); // SIGTERM: graceful shutdown, then exit
      expect(gw.proc.exitCode).toBe(0);
      const lines = readFileSync(join(dir, "logs", "gw.log"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
      const access = lines.filter((l) => l.msg === "request");
      expect(access.map((l) => l.requestId).sort()).toEqual([...ids].sort());
      expect(access.filter((l) => l.stream)).toHaveLength(60);
      for (const l of access) expect(l).toMatchObject({ level: 30, status: 200, project: "shipped", keyId: "shipped-live", model: "openai/gpt-4o-mini" });
    } finally {
      await gw.stop();
      await upstream.close();
    }
  }, 60_000);
});
