// A gateway embedded with `startGateway({ env })` reads its `${VARS}` from that env at start and at every reload,
// not from process.env: a reload must not disable a provider whose key only that env holds.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import YAML from "yaml";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("reload-env");
const UPSTREAM_KEY = "sk-only-in-the-embedders-env";
const seen: string[] = [];
let upstream: Server;
let gw: TestGateway;

const config = (description: string, port: number) => ({
  store: { kind: "sqlite", path: "./gateway.db" },
  providers: { up: { protocol: "openai", base_url: `http://127.0.0.1:${port}/v1`, api_key: "${RELOAD_ENV_UPSTREAM_KEY}" } },
  models: { "x/m": { description, endpoints: [{ provider: "up", model: "m" }] } },
  projects: { p: { keys: [keyEntry("k", KEY)], budget: { usd: "10", period: "month" }, rate_limits: { rpm: 1000 } } },
});

beforeAll(async () => {
  upstream = createServer((req, res) => {
    seen.push(String(req.headers.authorization));
    req.resume().on("end", () => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
        id: "chatcmpl-1", object: "chat.completion", created: 1, model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const port = (upstream.address() as AddressInfo).port;
  expect(process.env.RELOAD_ENV_UPSTREAM_KEY).toBeUndefined();
  gw = await startTestGateway(config("first", port), { env: { RELOAD_ENV_UPSTREAM_KEY: UPSTREAM_KEY } });
  // The edit an operator makes: only a description changes.
  writeFileSync(gw.configFile, YAML.stringify(config("second", port)));
});
afterAll(async () => {
  await gw?.close();
  upstream?.close();
});

it("a reload keeps the provider key that the embedding env gave", async () => {
  const reload = await gw.gateway.reload();
  expect(reload.ok).toBe(true);
  const r = await postJson(`${gw.baseURL}/chat/completions`, { model: "x/m", messages: [{ role: "user", content: "hello" }] }, { authorization: `Bearer ${KEY}` });
  expect(r.status, r.text).toBe(200);
  expect(seen.at(-1)).toBe(`Bearer ${UPSTREAM_KEY}`);
});
