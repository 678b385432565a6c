// Money audit: input the upstream bills but its usage reports apart from the plain counts. Anthropic's 1-hour cache
// writes (usage.cache_creation.ephemeral_1h_input_tokens) cost 2x input, not the 5-minute 1.25x; Gemini's
// toolUsePromptTokenCount (what googleSearch fed back to the model) is input beside promptTokenCount. A scripted fake
// upstream answers with exactly the audit's usage; the ledger's cost is checked, JSON and streams alike.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IncomingMessage, ServerResponse } from "node:http";
import { keyEntry, ledgerRecordOf, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { listenLoopback, readRequest, type Loopback } from "./upstreams/http-fake.ts";

const KEY = testKey("cache-ttl-billing");
// Anthropic's usage for 100 000 tokens written to a 1-hour cache (Claude Sonnet 4.5 prices, as the catalog had them
// before input_cache_write_1h: the 1-hour price is then 2x input).
const CLAUDE_USAGE = {
  input_tokens: 10, output_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 100_000,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 100_000 },
};
const CLAUDE_PRICES = { input: "0.000003", output: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375" };
// Gemini's usage for a googleSearch-grounded answer; Gemini 2.5 Flash prices.
const GEMINI_USAGE = { promptTokenCount: 1000, toolUsePromptTokenCount: 20_000, candidatesTokenCount: 500, totalTokenCount: 21_500 };
const GEMINI_PRICES = { input: "0.0000003", output: "0.0000025" };

let up: Loopback;
let gw: TestGateway;

function sse(res: ServerResponse, events: [string | undefined, unknown][]) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const [event, data] of events) res.write(`${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`);
  res.end();
}

async function answer(req: IncomingMessage, res: ServerResponse) {
  const { path, body } = await readRequest(req);
  const gemini = { candidates: [{ content: { role: "model", parts: [{ text: "Grounded." }] }, finishReason: "STOP", index: 0 }], usageMetadata: GEMINI_USAGE, modelVersion: "gemini-2.5-flash" };
  if (path.includes(":streamGenerateContent")) return sse(res, [[undefined, gemini]]);
  if (path.includes(":generateContent")) {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify(gemini));
  }
  const message = { id: "msg_1", type: "message", role: "assistant", model: body.model, stop_sequence: null };
  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify({ ...message, content: [{ type: "text", text: "Cached." }], stop_reason: "end_turn", usage: CLAUDE_USAGE }));
  }
  sse(res, [
    ["message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { ...CLAUDE_USAGE, output_tokens: 1 } } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Cached." } }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 10 } }],
    ["message_stop", { type: "message_stop" }],
  ]);
}

beforeAll(async () => {
  up = await listenLoopback((req, res) => void answer(req, res));
  gw = await startTestGateway({
    providers: {
      claude: { protocol: "anthropic", base_url: up.origin, api_key: "sk-ant-fake" },
      gem: { protocol: "gemini", base_url: up.origin, api_key: "AIza-fake" },
    },
    models: {
      "anthropic/claude-sonnet-4.5": { type: "language", max_tokens: 64000, endpoints: [{ provider: "claude", model: "claude-sonnet-4-5-20250929", pricing: CLAUDE_PRICES }] },
      "google/gemini-2.5-flash": { type: "language", max_tokens: 65536, endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing: GEMINI_PRICES }] },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

const ledgerOf = (requestId: string | null) => ledgerRecordOf(gw, requestId);

const claudeBody = {
  model: "anthropic/claude-sonnet-4.5", max_tokens: 100,
  system: [{ type: "text", text: "A long, stable prompt.", cache_control: { type: "ephemeral", ttl: "1h" } }],
  messages: [{ role: "user", content: "Hi" }],
};
const anthropicHeaders = { authorization: `Bearer ${KEY}`, "anthropic-version": "2023-06-01" };

describe("Anthropic 1-hour cache writes", () => {
  it("a JSON answer bills the 100 000 tokens written for an hour at 2x input: $0.60018, not the 5-minute $0.37518", async () => {
    const r = await postJson(`${gw.baseURL}/messages`, claudeBody, anthropicHeaders);
    expect(r.status).toBe(200);
    const e = await ledgerOf(r.headers.get("x-request-id"));
    expect(e.cacheWriteTokens).toBe(100_000);
    expect(e.costUsd).toBe("0.60018");
  });

  it("a stream bills them from message_start's usage the same", async () => {
    const res = await fetch(`${gw.baseURL}/messages`, { method: "POST", headers: { ...anthropicHeaders, "content-type": "application/json" }, body: JSON.stringify({ ...claudeBody, stream: true }) });
    expect(await res.text()).toContain("message_stop");
    const e = await ledgerOf(res.headers.get("x-request-id"));
    expect(e.outcome).toBe("ok");
    expect(e.costUsd).toBe("0.60018");
  });
});

describe("Gemini tool-use prompt tokens", () => {
  const grounded = { contents: [{ role: "user", parts: [{ text: "Who won yesterday?" }] }], tools: [{ googleSearch: {} }] };
  const post = (op: string) => fetch(`${gw.url}/api/v1beta/models/google/gemini-2.5-flash:${op}`, { method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": KEY }, body: JSON.stringify(grounded) });

  it(":generateContent with googleSearch bills the 20 000 tool-use tokens as input: $0.00755, not $0.00155", async () => {
    const res = await post("generateContent");
    expect(res.status).toBe(200);
    const e = await ledgerOf(res.headers.get("x-request-id"));
    expect(e).toMatchObject({ inputTokens: 21_000, outputTokens: 500 });
    expect(e.costUsd).toBe("0.00755");
  });

  it(":streamGenerateContent bills them the same", async () => {
    const res = await post("streamGenerateContent?alt=sse");
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("Grounded.");
    const e = await ledgerOf(res.headers.get("x-request-id"));
    expect(e).toMatchObject({ inputTokens: 21_000, outputTokens: 500 });
    expect(e.costUsd).toBe("0.00755");
  });

  it("a chat client sees them in prompt_tokens and pays for them", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: "google/gemini-2.5-flash", messages: [{ role: "user", content: "Who won yesterday?" }] }, { authorization: `Bearer ${KEY}` });
    expect(r.status).toBe(200);
    expect(r.json.usage).toMatchObject({ prompt_tokens: 21_000, completion_tokens: 500, total_tokens: 21_500 });
    expect((await ledgerOf(r.headers.get("x-request-id"))).costUsd).toBe("0.00755");
  });
});
