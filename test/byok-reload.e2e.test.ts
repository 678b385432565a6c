// Server-wide upstream settings changed by a reload reach attempts made with a project's own key on a provider the
// gateway has no key for (BYOK). They used to keep the settings current when such a provider was first used:
// after reloading server.upstream_timeout_ms down to 300 ms, a gateway-key request to a slow upstream got its 504
// while the BYOK one still waited for the whole slow answer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import YAML from "yaml";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const GATEWAY_KEYED = testKey("gwkeyed");
const OWN = testKey("ownkeyed");
const SLOW_ANSWER_MS = 3000; // far past the reloaded timeout, well inside the one the gateway started with
let up: FakeOpenAI;
let gw: TestGateway;
const pending = new Set<NodeJS.Timeout>();

/** Answers a chat completion after SLOW_ANSWER_MS (the fake's own answers come at once). */
function answerSlowly(res: ServerResponse): void {
  const t = setTimeout(() => {
    pending.delete(t);
    if (res.destroyed) return;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({
      id: "chatcmpl-slow", object: "chat.completion", created: 1770933883, model: "m",
      choices: [{ index: 0, message: { role: "assistant", content: "late" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    }));
  }, SLOW_ANSWER_MS);
  pending.add(t);
}

const config = (upstreamTimeoutMs: number) => ({
  server: { upstream_timeout_ms: upstreamTimeoutMs },
  routing: { max_attempts: 1 },
  providers: {
    keyed: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" },
    byokp: { protocol: "openai", base_url: up.baseUrl, api_key: "${BYOKP_UNSET}" }, // no key of the gateway's: disabled
  },
  models: {
    "x/keyed": { endpoints: [{ provider: "keyed", model: "m" }] },
    "x/byok": { endpoints: [{ provider: "byokp", model: "m" }] },
  },
  projects: {
    p: { keys: [keyEntry("k", GATEWAY_KEYED)] },
    own: { keys: [keyEntry("k2", OWN)], providers: { byokp: { api_key: "proj-own-key" } } },
  },
});

const chat = (model: string, key: string, content: string) =>
  postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content }] }, { authorization: `Bearer ${key}` });

beforeAll(async () => {
  up = await startFakeOpenAI({ text: "quick answer" });
  up.hook = (req, res) => {
    if (req.headers.authorization === "Bearer proj-own-key") req.headers.authorization = "Bearer sk-fake-upstream"; // the fake knows one key
    if (!JSON.stringify(req.body).includes("answer slowly")) return false;
    answerSlowly(res);
    return true;
  };
  gw = await startTestGateway(config(60_000));
});
afterAll(async () => {
  for (const t of pending) clearTimeout(t);
  await gw?.close();
  await up?.close();
});

describe("a reload of server.upstream_timeout_ms", () => {
  it("reaches a BYOK provider already in use: its slow answer is a 504, as a gateway-key request's is", async () => {
    const first = await chat("x/byok", OWN, "hi"); // the BYOK provider's driver is made now, with the start's timeout
    expect(first.status, first.text).toBe(200);

    writeFileSync(gw.configFile, YAML.stringify(config(300)));
    expect((await gw.gateway.reload(gw.configFile)).ok).toBe(true);

    const keyed = await chat("x/keyed", GATEWAY_KEYED, "answer slowly");
    expect(keyed.status, keyed.text).toBe(504);
    const byok = await chat("x/byok", OWN, "answer slowly");
    expect(byok.status, byok.text).toBe(504);
    expect(byok.json.error.code).toBe("UPSTREAM_TIMEOUT");
  });
});
