// Anthropic's 4 cache breakpoints across client protocols: a fake Anthropic counts every cache_control it receives
// (nested tool_result blocks and the top-level field too) and refuses more than 4 as Anthropic does; a fake OpenAI
// chat upstream stands for a translated target. Also max_tokens 0 (Anthropic's cache pre-warm) on /v1/messages.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IncomingMessage, ServerResponse } from "node:http";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { listenLoopback, readRequest, type Loopback } from "./upstreams/http-fake.ts";

const KEY = testKey("cache-breakpoints");
const E = { type: "ephemeral" };
const AUTO = { gateway: { caching: "auto" } };
let up: Loopback;
let gw: TestGateway;
const sent: { path: string; body: any }[] = [];

function countMarkers(v: any): number {
  if (!v || typeof v !== "object") return 0;
  if (Array.isArray(v)) return v.reduce((n, x) => n + countMarkers(x), 0);
  let n = v.cache_control ? 1 : 0;
  for (const [k, x] of Object.entries(v)) if (k !== "cache_control") n += countMarkers(x);
  return n;
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function answer(req: IncomingMessage, res: ServerResponse) {
  const { path, body } = await readRequest(req);
  sent.push({ path, body });
  if (path.endsWith("/chat/completions")) {
    return json(res, 200, { id: "c1", object: "chat.completion", created: 1, model: body.model, choices: [{ index: 0, message: { role: "assistant", content: "Chat." }, finish_reason: "stop" }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } });
  }
  const n = countMarkers(body);
  if (n > 4) return json(res, 400, { type: "error", error: { type: "invalid_request_error", message: `A maximum of 4 blocks with cache_control may be provided. Found ${n}.` } });
  const out = body.max_tokens === 0 ? [] : [{ type: "text", text: "Anth." }];
  json(res, 200, { id: "msg_1", type: "message", role: "assistant", model: body.model, content: out, stop_reason: body.max_tokens === 0 ? "max_tokens" : "end_turn", stop_sequence: null, usage: { input_tokens: 5, output_tokens: 0, cache_creation_input_tokens: 2000, cache_read_input_tokens: 0 } });
}

beforeAll(async () => {
  up = await listenLoopback((req, res) => void answer(req, res));
  const claude = (provider: string) => ({ provider, model: "claude-sonnet-4-5", pricing: { input: "0.000003", output: "0.000015" } });
  const gpt = { provider: "oai", model: "gpt-x", pricing: { input: "0.000001", output: "0.000002" } };
  gw = await startTestGateway({
    providers: {
      anth: { protocol: "anthropic", base_url: up.origin, api_key: "sk-ant-fake" },
      oai: { protocol: "openai", base_url: `${up.origin}/v1`, api_key: "sk-fake" },
    },
    models: {
      "anthropic/claude": { type: "language", max_tokens: 64000, endpoints: [claude("anth")] },
      "openai/gpt-x": { type: "language", max_tokens: 16000, endpoints: [gpt] },
      "mixed/claude-or-gpt": { type: "language", max_tokens: 16000, endpoints: [claude("anth"), gpt] },
      "mixed/gpt-or-claude": { type: "language", max_tokens: 16000, endpoints: [gpt, claude("anth")] },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

async function post(path: string, body: unknown) {
  sent.length = 0;
  const r = await postJson(`${gw.url}${path}`, body, { authorization: `Bearer ${KEY}` });
  return { status: r.status, json: r.json as any, upstream: sent.map((s) => s.body), paths: sent.map((s) => s.path) };
}

// A tool loop whose tool result carries two markers of the client's own, inside its content blocks.
const toolLoop = {
  system: "sys",
  tools: [{ name: "t", input_schema: { type: "object" } }],
  messages: [
    { role: "user", content: "q" },
    { role: "assistant", content: [{ type: "tool_use", id: "tu1", name: "t", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "tu1", content: [{ type: "text", text: "r1", cache_control: E }, { type: "text", text: "r2", cache_control: E }] }] },
    { role: "assistant", content: "a" },
    { role: "user", content: "next" },
  ],
};

describe("caching: auto never takes Anthropic past 4 breakpoints", () => {
  it("counts the markers inside a tool_result: 2 of the client's + 2 placed, and Anthropic answers", async () => {
    const r = await post("/api/v1/messages", { model: "anthropic/claude", max_tokens: 50, providerOptions: AUTO, ...toolLoop });
    expect(r.status).toBe(200);
    expect(countMarkers(r.upstream[0])).toBe(4);
    expect(r.upstream[0].tools[0].cache_control).toEqual(E); // the highest-priority places are taken first
  });

  it("counts a top-level cache_control (the SDK's automatic breakpoint) as one of the 4", async () => {
    const messages = [{ role: "user", content: "q" }, { role: "assistant", content: "a" }, { role: "user", content: "next" }];
    const r = await post("/api/v1/messages", { model: "anthropic/claude", max_tokens: 50, providerOptions: AUTO, cache_control: E, system: "sys", tools: toolLoop.tools, messages });
    expect(r.status).toBe(200);
    expect(countMarkers(r.upstream[0])).toBe(4); // the top-level one, the tool, the system prompt, the stable prefix
    expect(r.upstream[0].messages[2].content).toBe("next");
  });

  it("a Responses request to Claude gets the markers a chat one would", async () => {
    const r = await post("/api/v1/responses", { model: "anthropic/claude", max_output_tokens: 50, instructions: "s", providerOptions: AUTO, input: [{ role: "user", content: "u1" }, { role: "assistant", content: "a1" }, { role: "user", content: "u2" }] });
    expect(r.status).toBe(200);
    const body = r.upstream[0];
    expect(body.system.at(-1).cache_control).toEqual(E);
    expect(body.messages.at(-1).content.at(-1).cache_control).toEqual(E);
    expect(countMarkers(body)).toBe(3);
  });
});

describe("chat markers Anthropic receives", () => {
  it("an assistant's marked part and a marked message with string content reach it, and count toward the 4", async () => {
    const messages = [{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "text", text: "a", cache_control: E }] }, { role: "user", content: "z", cache_control: E }];
    const r = await post("/api/v1/chat/completions", { model: "anthropic/claude", max_tokens: 10, messages });
    expect(r.status).toBe(200);
    expect(r.upstream[0].messages).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: [{ type: "text", text: "a", cache_control: E }] },
      { role: "user", content: [{ type: "text", text: "z", cache_control: E }] },
    ]);
    // Three more on system messages and the first turn: five, refused before any call as Anthropic would refuse them.
    const five = [{ role: "system", content: "s1", cache_control: E }, { role: "system", content: "s2", cache_control: E }, { ...messages[0], cache_control: E }, ...messages.slice(1)];
    const over = await post("/api/v1/chat/completions", { model: "anthropic/claude", max_tokens: 10, messages: five });
    expect(over.status).toBe(400);
    expect(over.json.error.details.field).toBe("cache_control");
    expect(over.upstream).toEqual([]);
  });
});

describe("more than 4 breakpoints is a 400 naming cache_control before any upstream call", () => {
  const fiveChat = {
    max_tokens: 50,
    tools: [{ type: "function", function: { name: "a", parameters: { type: "object" } }, cache_control: E }],
    messages: [
      { role: "system", content: [{ type: "text", text: "s", cache_control: E }] },
      { role: "user", content: [{ type: "text", text: "u1", cache_control: E }] },
      { role: "assistant", content: "a1" },
      { role: "user", content: [{ type: "text", text: "u2", cache_control: E }, { type: "text", text: "u3", cache_control: E }] },
    ],
  };

  it("chat to Claude", async () => {
    const r = await post("/api/v1/chat/completions", { model: "anthropic/claude", ...fiveChat });
    expect(r.status).toBe(400);
    expect(r.json.error.details.field).toBe("cache_control");
    expect(r.upstream).toEqual([]);
  });

  it("chat to a model whose other endpoint takes no markers: that endpoint serves it", async () => {
    const r = await post("/api/v1/chat/completions", { model: "mixed/claude-or-gpt", ...fiveChat });
    expect(r.status).toBe(200);
    expect(r.paths).toEqual(["/v1/chat/completions"]);
    expect(JSON.stringify(r.upstream[0])).not.toContain("cache_control");
  });

  it("messages with markers inside a tool_result counted", async () => {
    const messages = toolLoop.messages.map((m, i) => i === 4 ? { role: "user", content: [{ type: "text", text: "n1", cache_control: E }, { type: "text", text: "n2", cache_control: E }, { type: "text", text: "n3", cache_control: E }] } : m);
    const r = await post("/api/v1/messages", { model: "anthropic/claude", max_tokens: 50, ...toolLoop, messages });
    expect(r.status).toBe(400);
    expect(r.json.error.details.field).toBe("cache_control");
    expect(r.upstream).toEqual([]);
  });
});

describe("max_tokens 0 (cache pre-warm) on /v1/messages", () => {
  const prewarm = { max_tokens: 0, system: [{ type: "text", text: "long", cache_control: E }], messages: [{ role: "user", content: "hi" }] };

  it("reaches Anthropic as 0", async () => {
    const r = await post("/api/v1/messages", { model: "anthropic/claude", ...prewarm });
    expect(r.status).toBe(200);
    expect(r.upstream[0].max_tokens).toBe(0);
    expect(r.json.usage.cache_creation_input_tokens).toBe(2000);
  });

  it("passes over a translated target (0 would mean no limit there); a 400 naming max_tokens when none is left", async () => {
    const r = await post("/api/v1/messages", { model: "mixed/gpt-or-claude", ...prewarm });
    expect(r.status).toBe(200);
    expect(r.paths).toEqual(["/v1/messages"]);
    expect(r.upstream[0].max_tokens).toBe(0);
    const only = await post("/api/v1/messages", { model: "openai/gpt-x", ...prewarm });
    expect(only.status).toBe(400);
    expect(only.json.error.details.field).toBe("max_tokens");
    expect(only.upstream).toEqual([]);
  });
});
