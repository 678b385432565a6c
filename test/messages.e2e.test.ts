// Messages API end to end with the official @anthropic-ai/sdk: a native Anthropic model (fake upstream), an
// OpenAI-protocol model (translated), and the simulator behind a sandbox key (translated).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { validateMessage } from "../core/generated/validators.js";

const LIVE = testKey("messages-e2e");
const SANDBOX = testKey("messages-sbx", true);
let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;
let client: Anthropic;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  gw = await startTestGateway({
    server: { upstream_timeout_ms: 3000 },
    providers: {
      up: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
      claude: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
    },
    models: {
      "openai/gpt-4o-mini": { type: "language", endpoints: [{ provider: "up", model: "gpt-4o-mini-2024-07-18", pricing: { input: "0.00000015", output: "0.0000006" } }] },
      "anthropic/claude-sonnet-4.5": {
        type: "language", max_tokens: 64000,
        endpoints: [{ provider: "claude", model: "claude-sonnet-4-5-20250929", pricing: { input: "0.000003", output: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375" } }],
      },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE), keyEntry("sbx", SANDBOX)] } },
  });
  client = new Anthropic({ apiKey: LIVE, baseURL: gw.baseURL.replace(/\/v1$/, ""), maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await anthropic?.close();
});

const weatherTool = {
  name: "get_weather",
  description: "Weather for a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" }, unit: { type: "string" } }, required: ["city"] },
};

const timeTool = { name: "get_time", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } };
const tools = [weatherTool, timeTool];

/** Two-step tool loop: the model asks for tools, we answer every call, the model answers in text. */
async function toolLoop(c: Anthropic, model: string, stream: boolean) {
  const messages: Anthropic.MessageParam[] = [{ role: "user", content: "What's the weather in Paris?" }];
  const first = stream
    ? await c.messages.stream({ model, max_tokens: 200, messages, tools }).finalMessage()
    : await c.messages.create({ model, max_tokens: 200, messages, tools });
  expect(first.stop_reason).toBe("tool_use");
  expect(validateMessage(first)).toBe(true);
  const uses = first.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
  expect(uses.length).toBeGreaterThan(0);
  expect(uses[0]!.name).toBe("get_weather");
  expect(uses[0]!.input).toEqual({ city: "Paris", unit: "celsius" });
  messages.push({ role: "assistant", content: first.content as Anthropic.ContentBlockParam[] });
  messages.push({ role: "user", content: uses.map((u) => ({ type: "tool_result" as const, tool_use_id: u.id, content: "18°C and sunny" })) });
  const second = stream
    ? await c.messages.stream({ model, max_tokens: 200, messages, tools }).finalMessage()
    : await c.messages.create({ model, max_tokens: 200, messages, tools });
  expect(second.stop_reason).toBe("end_turn");
  expect(second.content[0]!.type).toBe("text");
  return { first, second };
}

describe("native Anthropic model through /v1/messages", () => {
  const model = "anthropic/claude-sonnet-4.5";

  it("non-streaming: passes the body through with the upstream model id and forwards the version and beta headers", async () => {
    const msg = await client.messages.create(
      { model, max_tokens: 100, system: "Be brief.", messages: [{ role: "user", content: "Hi" }], top_k: 5, metadata: { user_id: "u1" }, unknown_field: 1 } as never,
      { headers: { "anthropic-beta": "fine-grained-tool-streaming-2025-05-14" } },
    );
    expect(msg.type).toBe("message");
    expect(msg.content).toEqual([expect.objectContaining({ type: "text", text: "Hello from the fake Anthropic upstream." })]);
    expect(msg.stop_reason).toBe("end_turn");
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect((msg as any).providerMetadata.gateway.resolvedProvider).toBe("claude");
    expect(validateMessage(msg)).toBe(true);
    const seen = anthropic.requests.at(-1)!;
    expect(seen.body.model).toBe("claude-sonnet-4-5-20250929");
    expect(seen.body.top_k).toBe(5);
    expect(seen.body.unknown_field).toBe(1);
    expect(seen.body.providerOptions).toBeUndefined();
    expect(seen.headers["x-api-key"]).toBe(FAKE_ANTHROPIC_KEY);
    // Whatever dated version the SDK sends is forwarded as is.
    expect(seen.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(seen.headers["anthropic-beta"]).toBe("fine-grained-tool-streaming-2025-05-14");
  });

  it("streaming: messages.stream().finalMessage() assembles text", async () => {
    const stream = client.messages.stream({ model, max_tokens: 100, messages: [{ role: "user", content: "Hi" }] });
    const texts: string[] = [];
    stream.on("text", (t) => texts.push(t));
    const msg = await stream.finalMessage();
    expect(texts.join("")).toBe("Hello from the fake Anthropic upstream.");
    expect(msg.usage.output_tokens).toBeGreaterThan(0);
  });

  it("two-step tool loop, streaming and not", async () => {
    await toolLoop(client, model, false);
    const { first } = await toolLoop(client, model, true);
    expect(first.content.filter((b) => b.type === "tool_use").length).toBe(2);
  });

  it("thinking blocks and their signatures survive a round trip", async () => {
    const msg = await client.messages.stream({ model, max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 1024 }, messages: [{ role: "user", content: "Think" }] }).finalMessage();
    const thinking = msg.content[0] as Anthropic.ThinkingBlock;
    expect(thinking.type).toBe("thinking");
    expect(thinking.signature).toMatch(/^Eq/);
    await client.messages.create({ model, max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 1024 }, messages: [
      { role: "user", content: "Think" }, { role: "assistant", content: msg.content as never }, { role: "user", content: "Again" },
    ] });
    expect(anthropic.requests.at(-1)!.body.messages[1].content[0]).toEqual({ type: "thinking", thinking: thinking.thinking, signature: thinking.signature });
  });

  it("a dollar thinkingBudget becomes budget_tokens through the output price; a bare thinking passes through", async () => {
    await client.messages.create({ model, max_tokens: 1000, messages: [{ role: "user", content: "Think" }], providerOptions: { claude: { thinkingBudget: 0.03 } } } as never);
    const up = anthropic.requests.at(-1)!.body;
    expect(up.thinking).toEqual({ type: "enabled", budget_tokens: 2000 }); // $0.03 / $0.000015 per token
    expect(up.max_tokens).toBe(3000);
    expect(up.providerOptions).toBeUndefined();
  });

  it("the beta client (Claude-Code style: /v1/messages?beta=true, anthropic-beta) works and its betas are forwarded", async () => {
    const msg = await client.beta.messages.stream({ model, max_tokens: 100, messages: [{ role: "user", content: "Hi" }], betas: ["interleaved-thinking-2025-05-14"] }).finalMessage();
    expect(msg.content[0]).toEqual(expect.objectContaining({ type: "text" }));
    expect(anthropic.requests.at(-1)!.headers["anthropic-beta"]).toBe("interleaved-thinking-2025-05-14");
  });

  it("accepts x-api-key and Bearer, and any dated anthropic-version", async () => {
    const body = { model, max_tokens: 10, messages: [{ role: "user", content: "Hi" }] };
    const a = await postJson(`${gw.baseURL}/messages`, body, { "x-api-key": LIVE, "anthropic-version": "2024-10-22" });
    expect(a.status).toBe(200);
    expect(anthropic.requests.at(-1)!.headers["anthropic-version"]).toBe("2024-10-22");
    const b = await postJson(`${gw.baseURL}/messages`, body, { authorization: `Bearer ${LIVE}` });
    expect(b.status).toBe(200);
  });
});

describe("OpenAI-protocol model through /v1/messages (translated)", () => {
  const model = "openai/gpt-4o-mini";

  it("non-streaming text", async () => {
    const msg = await client.messages.create({ model, max_tokens: 100, system: "Be brief.", messages: [{ role: "user", content: "Hi" }] });
    expect(msg.content).toEqual([{ type: "text", text: "Hello from the fake upstream, streaming word by word.", citations: null }]);
    expect(validateMessage(msg)).toBe(true);
    expect(msg.stop_reason).toBe("end_turn");
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    const seen = openai.requests.at(-1)!.body;
    expect(seen.messages[0]).toEqual({ role: "system", content: "Be brief." });
    expect(seen.max_tokens).toBe(100);
  });

  it("streaming text with usage in message_delta", async () => {
    const msg = await client.messages.stream({ model, max_tokens: 100, messages: [{ role: "user", content: "Hi" }] }).finalMessage();
    expect(msg.content).toEqual([expect.objectContaining({ type: "text", text: "Hello from the fake upstream, streaming word by word." })]);
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect(msg.usage.output_tokens).toBeGreaterThan(0);
  });

  it("two-step tool loop, streaming and not (parallel calls keep their own blocks)", async () => {
    await toolLoop(client, model, false);
    const { first } = await toolLoop(client, model, true);
    expect(first.content.map((b) => b.type)).toEqual(["tool_use", "tool_use"]);
    // Tool results came back as tool messages right after the assistant's tool_calls.
    const seen = openai.requests.at(-1)!.body.messages;
    expect(seen.map((m: any) => m.role)).toEqual(["user", "assistant", "tool", "tool"]);
  });

  it("thinking is dropped for a non-native model and the response says so", async () => {
    const res = await postJson(`${gw.baseURL}/messages`, { model, max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 1024 }, messages: [{ role: "user", content: "Hi" }] }, { "x-api-key": LIVE });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-mg-dropped-params")).toBe("thinking");
  });
});

describe("sandbox key: the simulator through /v1/messages", () => {
  it("streams and answers non-streaming", async () => {
    const sbx = new Anthropic({ apiKey: SANDBOX, baseURL: gw.baseURL.replace(/\/v1$/, ""), maxRetries: 0 });
    const msg = await sbx.messages.create({ model: "openai/gpt-4o-mini", max_tokens: 50, messages: [{ role: "user", content: "Hi" }] });
    expect(msg.content[0]!.type).toBe("text");
    const streamed = await sbx.messages.stream({ model: "anthropic/claude-sonnet-4.5", max_tokens: 50, messages: [{ role: "user", content: "Hi" }] }).finalMessage();
    expect(streamed.content[0]!.type).toBe("text");
    expect(streamed.usage.output_tokens).toBeGreaterThan(0);
  });
});

/** The wire rules every messages stream must keep (reference §2.4, §2.9). */
function checkMessagesWire(text: string) {
  const frames = text.split("\n\n").filter(Boolean);
  const events = frames.map((f) => {
    const m = /^event: (\S+)\ndata: (.*)$/s.exec(f);
    expect(m, `frame without an event line: ${f}`).not.toBeNull();
    const data = JSON.parse(m![2]!);
    expect(data.type).toBe(m![1]);
    return data;
  });
  expect(events[0].type).toBe("message_start");
  expect(events.filter((e) => e.type === "message_start")).toHaveLength(1);
  expect(events.at(-1).type).toBe("message_stop");
  const starts = events.filter((e) => e.type === "content_block_start").map((e) => e.index);
  expect(starts).toEqual(starts.map((_, i) => i));
  expect(events.filter((e) => e.type === "content_block_stop").map((e) => e.index)).toEqual(starts);
  let open = -1;
  for (const e of events) {
    if (e.type === "content_block_start") open = e.index;
    if (e.type === "content_block_delta") expect(e.index).toBe(open);
  }
  expect(typeof events.find((e) => e.type === "message_delta").usage.output_tokens).toBe("number");
  return events;
}

describe("request-id on Messages answers (Anthropic sends it; the SDK shows it as request_id)", () => {
  it("JSON and streamed answers, native and translated, carry the gateway's request id as request-id", async () => {
    for (const model of ["anthropic/claude-sonnet-4.5", "openai/gpt-4o-mini"]) {
      const { data, response, request_id } = await client.messages.create({ model, max_tokens: 50, messages: [{ role: "user", content: "Hi" }] }).withResponse();
      expect(data.type).toBe("message");
      expect(response.headers.get("request-id")).toBe(response.headers.get("x-request-id"));
      expect(request_id).toMatch(/\S/);
      // The gateway's own id, not the upstream's.
      expect(request_id).not.toBe("req_fake_anthropic");

      const stream = client.messages.stream({ model, max_tokens: 50, messages: [{ role: "user", content: "Hi" }] });
      const { response: streamed, request_id: streamedId } = await stream.withResponse();
      await stream.finalMessage();
      expect(streamedId).toBe(streamed.headers.get("x-request-id"));
    }
    const count = await client.messages.countTokens({ model: "anthropic/claude-sonnet-4.5", messages: [{ role: "user", content: "Hi" }] }).withResponse();
    expect(count.request_id).toBe(count.response.headers.get("x-request-id"));
  });
});

describe("messages stream wire format", () => {
  it.each([
    ["native", "anthropic/claude-sonnet-4.5", LIVE],
    ["OpenAI-protocol", "openai/gpt-4o-mini", LIVE],
    ["simulator", "openai/gpt-4o-mini", SANDBOX],
  ])("%s: named events, type equals event, contiguous block indexes", async (_name, model, key) => {
    for (const withTools of [false, true]) {
      const res = await fetch(`${gw.baseURL}/messages`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model, max_tokens: 100, stream: true, messages: [{ role: "user", content: "Weather in Paris?" }], ...(withTools ? { tools } : {}) }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
      checkMessagesWire(await res.text());
    }
  });
});

describe("prompt caching on the native path", () => {
  it("caching auto places markers, strips providerOptions, and reports cache tokens", async () => {
    const body = { model: "anthropic/claude-sonnet-4.5", max_tokens: 50, system: "A long and stable system prompt.", tools, messages: [{ role: "user", content: "Hi" }], providerOptions: { gateway: { caching: "auto" } } };
    const a = await postJson(`${gw.baseURL}/messages`, body, { "x-api-key": LIVE });
    const up = anthropic.requests.at(-1)!.body;
    expect(up.providerOptions).toBeUndefined();
    expect(up.tools[1].cache_control).toEqual({ type: "ephemeral" });
    expect(up.system).toEqual([{ type: "text", text: "A long and stable system prompt.", cache_control: { type: "ephemeral" } }]);
    expect(up.messages[0].content).toEqual([{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }]);
    expect(a.json.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    const b = await postJson(`${gw.baseURL}/messages`, body, { "x-api-key": LIVE });
    expect(b.json.usage.cache_read_input_tokens).toBeGreaterThan(0);
  });

  it("explicit markers pass through untouched to the native upstream and are dropped when translated", async () => {
    const messages = [{ role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral", ttl: "1h" } }] }];
    await postJson(`${gw.baseURL}/messages`, { model: "anthropic/claude-sonnet-4.5", max_tokens: 10, messages }, { "x-api-key": LIVE });
    expect(anthropic.requests.at(-1)!.body.messages).toEqual(messages);
    await postJson(`${gw.baseURL}/messages`, { model: "openai/gpt-4o-mini", max_tokens: 10, messages }, { "x-api-key": LIVE });
    expect(JSON.stringify(openai.requests.at(-1)!.body)).not.toContain("cache_control");
  });

  it("more than four explicit breakpoints is a 400 naming cache_control", async () => {
    const blocks = Array.from({ length: 5 }, (_, i) => ({ type: "text", text: `b${i}`, cache_control: { type: "ephemeral" } }));
    const res = await postJson(`${gw.baseURL}/messages`, { model: "anthropic/claude-sonnet-4.5", max_tokens: 10, messages: [{ role: "user", content: blocks }] }, { "x-api-key": LIVE });
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe("cache_control");
  });
});
