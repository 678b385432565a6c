// Fields and values the official SDKs type and send reach the model through the gateway as it ships (gateway.yaml:
// SQLite store, full default pipeline, default catalog) rather than a 400 of the gateway's own (DESIGN §10): sent as
// they are to a model serving the client's protocol, and on a translated model either carried over or dropped and
// named in x-mg-dropped-params. Each request is made with the SDK itself, in the SDK's own types.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";

const CLAUDE = "anthropic/claude-sonnet-4.5";
const GPT = "openai/gpt-4.1";

let openai: FakeOpenAIWithResponses;
let anthropic: FakeAnthropic;
let gw: TestGateway;
let claude: Anthropic;
let oai: OpenAI;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAIResponses(), startFakeAnthropic()]);
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  gw = await startTestGateway(config, { env: providerEnv(config) });
  claude = new Anthropic({ apiKey: SHIPPED_KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });
  oai = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

const lastBody = (fake: { requests: { body: any }[] }) => fake.requests.at(-1)!.body;
const dropped = (headers: Headers) => (headers.get("x-mg-dropped-params") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
const hi: Anthropic.MessageParam[] = [{ role: "user", content: "hi" }];

describe("Messages: thinking {type: between_tools}", () => {
  it("Claude gets it as sent, on a generation and a token count", async () => {
    const msg = await claude.messages.create({ model: CLAUDE, max_tokens: 64, messages: hi, thinking: { type: "between_tools" } });
    expect(msg.type).toBe("message");
    expect(lastBody(anthropic).thinking).toEqual({ type: "between_tools" });
    const count = await claude.messages.countTokens({ model: CLAUDE, messages: hi, thinking: { type: "between_tools" } });
    expect(count.input_tokens).toBeGreaterThan(0);
    expect(lastBody(anthropic).thinking).toEqual({ type: "between_tools" });
  });

  it("a translated model answers with thinking off, the field named", async () => {
    const { data, response } = await claude.messages.create({ model: GPT, max_tokens: 64, messages: hi, thinking: { type: "between_tools" } }).withResponse();
    expect(data.content[0]).toMatchObject({ type: "text" });
    expect(dropped(response.headers)).toContain("thinking");
    expect(lastBody(openai)).not.toHaveProperty("reasoning_effort");
  });
});

describe("Responses: reasoning.effort max (the openai SDK's ReasoningEffort, which chat takes too)", () => {
  it("a native model gets it as sent; a translated one answers", async () => {
    const native = await oai.responses.create({ model: "openai/gpt-5", input: "hi", reasoning: { effort: "max" } });
    expect(native.status).toBe("completed");
    expect(lastBody(openai).reasoning).toEqual({ effort: "max" });
    const translated = await oai.responses.create({ model: CLAUDE, input: "hi", reasoning: { effort: "max" } });
    expect(translated.status).toBe("completed");
    expect(lastBody(anthropic).thinking).toMatchObject({ type: "enabled" });
  });
});

describe("Messages: typed tools without a name", () => {
  const toolsets: Anthropic.ToolUnion[] = [{ type: "computer_toolset_20260801" }, { type: "browser_toolset_20260801" }];

  it.each(toolsets)("Claude gets %j as sent", async (tool) => {
    const msg = await claude.messages.create({ model: CLAUDE, max_tokens: 64, messages: hi, tools: [tool] });
    expect(msg.type).toBe("message");
    expect(lastBody(anthropic).tools).toEqual([tool]);
  });

  it("the beta mcp_toolset reaches Claude as sent", async () => {
    const mcp = { type: "mcp_toolset" as const, mcp_server_name: "docs" };
    const msg = await claude.beta.messages.create({
      model: CLAUDE, max_tokens: 64, messages: hi, betas: ["mcp-client-2025-11-20"],
      mcp_servers: [{ type: "url", url: "https://example.com/mcp", name: "docs" }], tools: [mcp],
    });
    expect(msg.type).toBe("message");
    expect(lastBody(anthropic).tools).toEqual([mcp]);
  });

  it("a translated model refuses a toolset as it refuses every Anthropic server tool: a 400 naming tools[0].type", async () => {
    const err = await claude.messages.create({ model: GPT, max_tokens: 64, messages: hi, tools: toolsets }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.error.error).toMatchObject({ type: "invalid_request_error", details: { field: "tools[0].type" } });
  });
});

describe("Messages: content blocks of types the gateway does not know", () => {
  const compacted: Anthropic.Beta.BetaMessageParam[] = [
    { role: "user", content: "hi" },
    { role: "assistant", content: [{ type: "compaction", content: "summary of earlier turns" }, { type: "text", text: "ok" }] },
    { role: "user", content: "again" },
  ];
  const withToolReference: Anthropic.MessageParam[] = [
    { role: "user", content: "find a tool" },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "tool_search", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "tool_reference", tool_name: "get_weather" }] }] },
  ];
  const tools: Anthropic.Tool[] = [
    { name: "tool_search", input_schema: { type: "object", properties: {} } },
    { name: "get_weather", input_schema: { type: "object", properties: {} } },
  ];

  it("Claude gets them as sent: a beta compaction block, a tool_reference in a tool result", async () => {
    await claude.beta.messages.create({ model: CLAUDE, max_tokens: 64, messages: compacted, betas: ["compact-2026-01-12"] });
    expect(lastBody(anthropic).messages[1].content[0]).toEqual({ type: "compaction", content: "summary of earlier turns" });
    await claude.messages.create({ model: CLAUDE, max_tokens: 64, messages: withToolReference, tools });
    expect(lastBody(anthropic).messages[2].content[0].content).toEqual([{ type: "tool_reference", tool_name: "get_weather" }]);
  });

  it("a translated model answers without them, each named", async () => {
    const a = await claude.beta.messages.create({ model: GPT, max_tokens: 64, messages: compacted, betas: ["compact-2026-01-12"] }).withResponse();
    expect(a.data.content[0]).toMatchObject({ type: "text" });
    expect(dropped(a.response.headers)).toContain("messages[1].content[0]");
    expect(JSON.stringify(lastBody(openai))).not.toContain("compaction");
    const b = await claude.messages.create({ model: GPT, max_tokens: 64, messages: withToolReference, tools }).withResponse();
    expect(b.data.type).toBe("message");
    expect(dropped(b.response.headers)).toContain("messages[2].content[0].content[0]");
    expect(JSON.stringify(lastBody(openai))).not.toContain("tool_reference");
  });

  it("a translated model counts them too (tokenizer), without them", async () => {
    const count = await claude.messages.countTokens({ model: GPT, messages: withToolReference, tools });
    expect(count.input_tokens).toBeGreaterThan(0);
  });
});

describe("null where the SDK types a field nullable", () => {
  const nulls: Anthropic.MessageCreateParamsNonStreaming = {
    model: CLAUDE, max_tokens: 64,
    system: [{ type: "text", text: "be brief", cache_control: null }],
    tools: [{ name: "f", input_schema: { type: "object", properties: {} }, cache_control: null }],
    messages: [{ role: "user", content: [{ type: "text", text: "hi", cache_control: null }] }],
  };

  it("Messages cache_control: null reaches Claude as sent and a translated model without it", async () => {
    await claude.messages.create(nulls);
    expect(lastBody(anthropic).system).toEqual([{ type: "text", text: "be brief", cache_control: null }]);
    const { response } = await claude.messages.create({ ...nulls, model: GPT }).withResponse();
    expect(dropped(response.headers)).not.toContain("cache_control");
    expect(JSON.stringify(lastBody(openai))).not.toContain("cache_control");
  });

  it("Responses input_image detail: null in a function_call_output: a translated model gets the image without a detail", async () => {
    const r = await oai.responses.create({
      model: CLAUDE,
      tools: [{ type: "function", name: "f", parameters: { type: "object", properties: {} }, strict: false }],
      input: [
        { role: "user", content: "hi" },
        { type: "function_call", call_id: "call_1", name: "f", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: [{ type: "input_image", image_url: "https://example.com/a.png", detail: null }] },
      ],
    });
    expect(r.status).toBe("completed");
    expect(JSON.stringify(lastBody(anthropic))).not.toContain('"detail"');
  });
});

describe("Responses: input left out, as the SDK allows (a stored prompt)", () => {
  it("a native model gets the prompt without input", async () => {
    const r = await oai.responses.create({ model: "openai/gpt-5", prompt: { id: "pmpt_1", version: "2" } });
    expect(r.status).toBe("completed");
    expect(lastBody(openai)).toMatchObject({ prompt: { id: "pmpt_1", version: "2" } });
    expect(lastBody(openai)).not.toHaveProperty("input");
  });

  it("a translated model: a 400 naming prompt, or input when neither is sent", async () => {
    const calls = anthropic.requests.length;
    const withPrompt = await oai.responses.create({ model: CLAUDE, prompt: { id: "pmpt_1" } }).catch((e) => e);
    expect(withPrompt).toBeInstanceOf(OpenAI.BadRequestError);
    expect(withPrompt.error).toMatchObject({ details: { field: "prompt" } });
    const bare = await oai.responses.create({ model: CLAUDE }).catch((e) => e);
    expect(bare).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bare.error).toMatchObject({ details: { field: "input" } });
    expect(anthropic.requests.length).toBe(calls);
  });
});
