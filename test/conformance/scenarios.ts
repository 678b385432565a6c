// The scenarios of the conformance matrix, each as a real app drives it through the official client of its protocol
// and checks what that app relies on. One entry per scenario: `chat` (openai client), `messages` (@anthropic-ai/sdk)
// and/or `gemini` (the Gemini API, gemini-scenarios.ts); each gets the environment and the upstream protocol of the
// model under test.
import { expect } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { jsonSchemaOutputFormat } from "@anthropic-ai/sdk/helpers/json-schema";
import { betaTool } from "@anthropic-ai/sdk/helpers/beta/json-schema";
import { validateChatCompletion, validateChatCompletionChunk, validateMessage } from "../../core/generated/validators.js";
import { expectOpenAIShape } from "../helpers/openai-spec.ts";
import { expectAnthropicShape } from "../helpers/anthropic-sdk-schema.ts";
import type { Env, Upstream } from "./env.ts";
import { GEMINI_RUNS } from "./gemini-scenarios.ts";

type Run = (env: Env, u: Upstream) => Promise<void>;
export interface Scenario { chat?: Run; messages?: Run; gemini?: Run }

const city = { type: "object", properties: { city: { type: "string" } }, required: ["city"] } as const;
const chatTools: OpenAI.ChatCompletionTool[] = [
  { type: "function", function: { name: "get_weather", description: "Weather in a city", parameters: { ...city, required: ["city"] } } },
  { type: "function", function: { name: "get_time", description: "Local time in a city", parameters: { ...city, required: ["city"] } } },
];
const messagesTools: Anthropic.Tool[] = [
  { name: "get_weather", description: "Weather in a city", input_schema: { ...city, required: ["city"] } },
  { name: "get_time", description: "Local time in a city", input_schema: { ...city, required: ["city"] } },
];
const weatherSchema = { type: "object", properties: { city: { type: "string" }, temp: { type: "number" } }, required: ["city", "temp"], additionalProperties: false } as const;
/** A 1x1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

// ---- chat client helpers ----

type ChatParams = Omit<OpenAI.ChatCompletionCreateParamsNonStreaming, "model">;

async function chatOnce(env: Env, u: Upstream, p: ChatParams): Promise<OpenAI.ChatCompletion> {
  const res = await env.chat.chat.completions.create({ model: env.model[u], ...p });
  expect(validateChatCompletion(res)).toBe(true);
  expectOpenAIShape("CreateChatCompletionResponse", res);
  expect(res.model).toBe(env.model[u]);
  return res;
}

/** Streams through the SDK's helper, checking every chunk; returns the chunks and the helper's assembled completion. */
async function chatStream(env: Env, u: Upstream, p: ChatParams & { stream_options?: OpenAI.ChatCompletionStreamOptions }) {
  const stream = env.chat.chat.completions.stream({ model: env.model[u], ...p, stream: true });
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  for (const c of chunks) expect(validateChatCompletionChunk(c)).toBe(true);
  for (const c of chunks) expectOpenAIShape("CreateChatCompletionStreamResponse", c, "chunk");
  expect(new Set(chunks.map((c) => c.model))).toEqual(new Set([env.model[u]]));
  expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant");
  expect(chunks.filter((c) => c.choices[0]?.delta.role).length).toBe(1);
  return { chunks, final: await stream.finalChatCompletion() };
}

function toolCallsOf(res: OpenAI.ChatCompletion, min = 1): OpenAI.ChatCompletionMessageFunctionToolCall[] {
  const calls = (res.choices[0]!.message.tool_calls ?? []) as OpenAI.ChatCompletionMessageFunctionToolCall[];
  expect(calls.length).toBeGreaterThanOrEqual(min);
  expect(res.choices[0]!.finish_reason).toBe("tool_calls");
  for (const c of calls) {
    expect(c.id).toBeTruthy();
    expect(typeof JSON.parse(c.function.arguments).city).toBe("string");
  }
  return calls;
}

function textAnswer(res: OpenAI.ChatCompletion): string {
  const m = res.choices[0]!.message;
  expect(m.tool_calls ?? []).toEqual([]);
  expect(typeof m.content).toBe("string");
  expect(m.content!.length).toBeGreaterThan(0);
  expect(res.choices[0]!.finish_reason).toBe("stop");
  return m.content!;
}

/** A chat tool loop: the assistant message goes back as the SDK returned it, answers in reverse call order. */
async function chatLoop(env: Env, u: Upstream, first: OpenAI.ChatCompletion, extra: Partial<ChatParams> = {}) {
  const msg = first.choices[0]!.message;
  const calls = toolCallsOf(first);
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: "user", content: "Weather and time in Paris?" },
    msg as OpenAI.ChatCompletionMessageParam,
    ...[...calls].reverse().map((c) => ({ role: "tool" as const, tool_call_id: c.id, content: `${c.function.name}: ok` })),
  ];
  return textAnswer(await chatOnce(env, u, { messages, tools: chatTools, ...extra }));
}

async function chatStatus(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await p.then(() => undefined, (e) => e);
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err;
}

// ---- messages client helpers ----

type MsgParams = Omit<Anthropic.MessageCreateParamsNonStreaming, "model">;

async function msgOnce(env: Env, u: Upstream, p: MsgParams): Promise<Anthropic.Message> {
  const res = await env.messages.messages.create({ model: env.model[u], ...p });
  expect(validateMessage(res)).toBe(true);
  expectAnthropicShape("Message", res);
  expect(res.model).toBe(env.model[u]);
  return res;
}

async function msgStream(env: Env, u: Upstream, p: MsgParams) {
  const stream = env.messages.messages.stream({ model: env.model[u], ...p });
  const events: Anthropic.MessageStreamEvent[] = [];
  for await (const e of stream) events.push(e);
  for (const e of events) expectAnthropicShape("RawMessageStreamEvent", e, `event ${e.type}`);
  expect(events[0]!.type).toBe("message_start");
  expect((events[0] as Anthropic.MessageStartEvent).message.model).toBe(env.model[u]);
  expect(events.at(-1)!.type).toBe("message_stop");
  return { events, final: await stream.finalMessage() };
}

function toolUsesOf(m: Anthropic.Message, min = 1): Anthropic.ToolUseBlock[] {
  const uses = m.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
  expect(uses.length).toBeGreaterThanOrEqual(min);
  expect(m.stop_reason).toBe("tool_use");
  for (const b of uses) expect(typeof (b.input as any).city).toBe("string");
  return uses;
}

function msgText(m: Anthropic.Message): string {
  expect(m.content.some((b) => b.type === "tool_use")).toBe(false);
  const text = m.content.filter((b): b is Anthropic.TextBlock => b.type === "text").map((b) => b.text).join("");
  expect(text.length).toBeGreaterThan(0);
  expect(m.stop_reason).toBe("end_turn");
  return text;
}

/**
 * A messages tool loop as the SDK's users write it: the assistant turn goes back as returned (thinking included), the
 * results in reverse order with text beside them and one is_error — a valid Anthropic turn every upstream must accept.
 */
async function msgLoop(env: Env, u: Upstream, first: Anthropic.Message, extra: Partial<MsgParams> = {}) {
  const uses = toolUsesOf(first);
  // As Claude Code does: signed thinking blocks are kept only on assistant turns made by the model it is calling.
  const ours = first.model === env.model[u];
  const assistant = ours ? first.content : first.content.filter((b) => b.type !== "thinking" && b.type !== "redacted_thinking");
  const results: Anthropic.ContentBlockParam[] = [...uses].reverse().map((b, i) => ({ type: "tool_result" as const, tool_use_id: b.id, content: `${b.name}: ok`, ...(i === 0 ? { is_error: true } : {}) }));
  const messages: Anthropic.MessageParam[] = [
    { role: "user", content: "Weather and time in Paris?" },
    { role: "assistant", content: assistant },
    { role: "user", content: [...results, { type: "text", text: "Thanks, summarise please." }] },
  ];
  return msgText(await msgOnce(env, u, { max_tokens: 1024, messages, tools: messagesTools, ...extra }));
}

async function msgStatus(p: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  const err = await p.then(() => undefined, (e) => e);
  expect(err).toBeInstanceOf(Anthropic.APIError);
  return err;
}

const ask = "Weather and time in Paris?";

/** Runnable tools for the SDK's tool runner; get_time fails (its result goes back with is_error). */
function runnerTools(ran: string[]) {
  const tool = (name: string, fail: boolean) => betaTool({
    name, description: name, inputSchema: city,
    run: ({ city: c }) => {
      ran.push(`${name}:${c}`);
      if (fail) throw new Error(`${name} is down`);
      return `${name} in ${c}: ok`;
    },
  });
  return [tool("get_weather", false), tool("get_time", true)];
}
const user = (content: string) => [{ role: "user" as const, content }];

/** How each upstream's own request shows an image that the client sent as base64 PNG. */
const IMAGE_ON_WIRE: Record<Upstream, (body: any) => unknown> = {
  openai: (b) => b.messages.at(-1).content.find((p: any) => p.type === "image_url")?.image_url.url,
  anthropic: (b) => {
    const img = b.messages.at(-1).content.find((p: any) => p.type === "image");
    return img && `data:${img.source.media_type};base64,${img.source.data}`;
  },
  gemini: (b) => {
    const img = b.contents.at(-1).parts.find((p: any) => p.inlineData)?.inlineData;
    return img && `data:${img.mimeType};base64,${img.data}`;
  },
};

/**
 * The errors a provider answers and the status and code the client gets for each (docs/routing.md): the provider's
 * request error is the caller's (400, the SDKs' BadRequestError, never retried); its 429 and 5xx are retried, then
 * 502 UPSTREAM_ERROR (a server error class every SDK may retry). RATE_LIMITED 429 is the gateway's own limit only.
 */
const UPSTREAM_ERRORS = { 400: { status: 400, code: "INVALID_REQUEST" }, 429: { status: 502, code: "UPSTREAM_ERROR" }, 500: { status: 502, code: "UPSTREAM_ERROR" } } as const;

function errorScenario(upstreamStatus: keyof typeof UPSTREAM_ERRORS): Scenario {
  const want = UPSTREAM_ERRORS[upstreamStatus];
  return {
    chat: async (env, u) => {
      env.fail(u, upstreamStatus, 5);
      const err = await chatStatus(chatOnce(env, u, { messages: user("Hi") }));
      expect(err.status).toBe(want.status);
      expect((err.error as any)?.code ?? (err as any).code).toBe(want.code);
    },
    messages: async (env, u) => {
      env.fail(u, upstreamStatus, 5);
      const err = await msgStatus(msgOnce(env, u, { max_tokens: 100, messages: user("Hi") }));
      expect(err.status).toBe(want.status);
      expect((err.error as any)?.error?.code).toBe(want.code);
    },
  };
}

export const SCENARIOS: Record<string, Scenario> = {
  text: {
    chat: async (env, u) => {
      const res = await chatOnce(env, u, { messages: [{ role: "system", content: "Be brief." }, ...user("Hi")] });
      textAnswer(res);
      expect(res.usage!.total_tokens).toBe(res.usage!.prompt_tokens + res.usage!.completion_tokens);
      expect(res.usage!.prompt_tokens).toBeGreaterThan(0);
    },
    messages: async (env, u) => {
      const res = await msgOnce(env, u, { max_tokens: 100, system: "Be brief.", messages: user("Hi") });
      msgText(res);
      expect(res.usage.input_tokens).toBeGreaterThan(0);
      expect(res.usage.output_tokens).toBeGreaterThan(0);
    },
  },
  stream: {
    chat: async (env, u) => {
      const { chunks, final } = await chatStream(env, u, { messages: user("Hi") });
      const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
      expect(text).toBe(textAnswer(final));
      expect(chunks.filter((c) => c.choices[0]?.finish_reason).length).toBe(1);
    },
    messages: async (env, u) => {
      const { events, final } = await msgStream(env, u, { max_tokens: 100, messages: user("Hi") });
      const text = events.map((e) => (e.type === "content_block_delta" && e.delta.type === "text_delta" ? e.delta.text : "")).join("");
      expect(text).toBe(msgText(final));
      expect(final.usage.output_tokens).toBeGreaterThan(0);
    },
  },
  "tool_choice auto": {
    chat: async (env, u) => void toolCallsOf(await chatOnce(env, u, { messages: user(ask), tools: chatTools, tool_choice: "auto" })),
    messages: async (env, u) => void toolUsesOf(await msgOnce(env, u, { max_tokens: 200, messages: user(ask), tools: messagesTools, tool_choice: { type: "auto" } })),
  },
  "tool_choice none": {
    chat: async (env, u) => void textAnswer(await chatOnce(env, u, { messages: user(ask), tools: chatTools, tool_choice: "none" })),
    messages: async (env, u) => void msgText(await msgOnce(env, u, { max_tokens: 200, messages: user(ask), tools: messagesTools, tool_choice: { type: "none" } })),
  },
  "tool_choice required": {
    chat: async (env, u) => void toolCallsOf(await chatOnce(env, u, { messages: user(ask), tools: chatTools, tool_choice: "required" })),
    messages: async (env, u) => void toolUsesOf(await msgOnce(env, u, { max_tokens: 200, messages: user(ask), tools: messagesTools, tool_choice: { type: "any" } })),
  },
  "tool_choice named": {
    chat: async (env, u) => {
      const calls = toolCallsOf(await chatOnce(env, u, { messages: user(ask), tools: chatTools, tool_choice: { type: "function", function: { name: "get_time" } } }));
      expect(calls.map((c) => c.function.name)).toEqual(["get_time"]);
    },
    messages: async (env, u) => {
      const uses = toolUsesOf(await msgOnce(env, u, { max_tokens: 200, messages: user(ask), tools: messagesTools, tool_choice: { type: "tool", name: "get_time" } }));
      expect(uses.map((b) => b.name)).toEqual(["get_time"]);
    },
  },
  "parallel tool calls (stream)": {
    chat: async (env, u) => {
      const { chunks, final } = await chatStream(env, u, { messages: user(ask), tools: chatTools });
      const calls = toolCallsOf(final, 2);
      expect(calls.map((c) => c.function.name)).toEqual(["get_weather", "get_time"]);
      expect(new Set(calls.map((c) => c.id)).size).toBe(2);
      const indexes = new Set(chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).map((t) => t.index));
      expect([...indexes]).toEqual([0, 1]);
    },
    messages: async (env, u) => {
      const { final } = await msgStream(env, u, { max_tokens: 200, messages: user(ask), tools: messagesTools });
      const uses = toolUsesOf(final, 2);
      expect(uses.map((b) => b.name)).toEqual(["get_weather", "get_time"]);
      expect(new Set(uses.map((b) => b.id)).size).toBe(2);
    },
  },
  "two-step tool loop": {
    chat: async (env, u) => void (await chatLoop(env, u, (await chatStream(env, u, { messages: user(ask), tools: chatTools })).final)),
    messages: async (env, u) => void (await msgLoop(env, u, (await msgStream(env, u, { max_tokens: 200, messages: user(ask), tools: messagesTools })).final)),
  },
  // The SDK's tool runner builds the conversation itself: all results of a turn in one user turn, a failed tool as
  // is_error. With `thread: false` it sends the whole history each turn, which every upstream can take.
  "SDK tool runner": {
    messages: async (env, u) => {
      const ran: string[] = [];
      const final = await env.messages.beta.messages.toolRunner({ model: env.model[u], max_tokens: 500, max_iterations: 4, thread: false, messages: user(ask), tools: runnerTools(ran) });
      expect(ran).toEqual(["get_weather:Paris", "get_time:Tokyo"]);
      expect(final.stop_reason).toBe("end_turn");
      expect(final.content.some((b) => b.type === "text" && b.text.length > 0)).toBe(true);
    },
  },
  // By default the runner uses message threads (only new turns are sent; the server keeps the rest): native
  // Anthropic gets `thread` passed through; a translated model refuses it with the code the SDK's threads recognise
  // (thread_unsupported_request), and the runner goes on unthreaded with the whole history.
  "SDK tool runner (default: message threads)": {
    messages: async (env, u) => {
      const ran: string[] = [];
      const runner = env.messages.beta.messages.toolRunner({ model: env.model[u], max_tokens: 500, max_iterations: 4, messages: user(ask), tools: runnerTools(ran) });
      if (u === "anthropic") {
        // The fake keeps no threads and refuses the continued turn; what counts is that both reached it untouched.
        await runner.runUntilDone().catch(() => undefined);
        expect(env.last(u).body.thread).toEqual({ type: "continue", previous_message_id: expect.stringMatching(/^msg_01\w{22}$/) });
        expect(String(env.last(u).headers["anthropic-beta"])).toContain("message-threads");
        return;
      }
      const final = await runner.runUntilDone();
      expect(ran).toEqual(["get_weather:Paris", "get_time:Tokyo"]);
      expect(final.stop_reason).toBe("end_turn");
      expect(env.last(u).body.thread).toBeUndefined();
    },
  },
  "structured output": {
    chat: async (env, u) => {
      const res = await chatOnce(env, u, { messages: user("Weather in Paris as JSON"), response_format: { type: "json_schema", json_schema: { name: "weather", schema: weatherSchema, strict: true } } });
      const out = JSON.parse(textAnswer(res));
      expect(typeof out.city).toBe("string");
      expect(typeof out.temp).toBe("number");
    },
    messages: async (env, u) => {
      const res = await env.messages.messages.parse({ model: env.model[u], max_tokens: 200, messages: user("Weather in Paris as JSON"), output_config: { format: jsonSchemaOutputFormat(weatherSchema) } });
      expect(typeof res.parsed_output?.city).toBe("string");
      expect(typeof res.parsed_output?.temp).toBe("number");
    },
  },
  "image input": {
    chat: async (env, u) => {
      textAnswer(await chatOnce(env, u, { messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }] }] }));
      expect(IMAGE_ON_WIRE[u](env.last(u).body)).toBe(`data:image/png;base64,${PNG}`);
    },
    messages: async (env, u) => {
      msgText(await msgOnce(env, u, { max_tokens: 100, messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }] }] }));
      expect(IMAGE_ON_WIRE[u](env.last(u).body)).toBe(`data:image/png;base64,${PNG}`);
    },
  },
  // Reasoning replayed across a tool loop: the upstream fakes refuse a replayed turn without its signed reasoning
  // (Anthropic: thinking block and signature; Gemini: the call's thoughtSignature).
  "reasoning across a tool loop": {
    chat: async (env, u) => {
      const first = await chatOnce(env, u, { messages: user(ask), tools: chatTools, reasoning_effort: "low" });
      if (u === "anthropic") expect((first.choices[0]!.message as any).reasoning_details[0]).toMatchObject({ type: "reasoning.text", format: "anthropic-claude-v1", signature: expect.any(String) });
      await chatLoop(env, u, first, { reasoning_effort: "low" });
    },
    messages: async (env, u) => {
      const thinking = { type: "enabled" as const, budget_tokens: 1024 };
      const first = await msgOnce(env, u, { max_tokens: 2048, messages: user(ask), tools: messagesTools, thinking });
      if (u === "anthropic") expect(first.content[0]!.type).toBe("thinking");
      await msgLoop(env, u, first, { max_tokens: 2048, thinking });
    },
  },
  "reasoning across a tool loop (stream)": {
    chat: async (env, u) => {
      const { final } = await chatStream(env, u, { messages: user(ask), tools: chatTools, reasoning_effort: "low" });
      if (u === "anthropic") expect((final.choices[0]!.message as any).reasoning_content).toBeTruthy();
      await chatLoop(env, u, final, { reasoning_effort: "low" });
    },
    messages: async (env, u) => {
      const thinking = { type: "enabled" as const, budget_tokens: 1024 };
      const { final } = await msgStream(env, u, { max_tokens: 2048, messages: user(ask), tools: messagesTools, thinking });
      await msgLoop(env, u, final, { max_tokens: 2048, thinking });
    },
  },
  "usage with include_usage": {
    chat: async (env, u) => {
      const { chunks } = await chatStream(env, u, { messages: user("Hi"), stream_options: { include_usage: true } });
      const withUsage = chunks.filter((c) => c.usage);
      expect(withUsage.length).toBe(1);
      expect(withUsage[0]).toBe(chunks.at(-1));
      expect(withUsage[0]!.choices).toEqual([]);
      const usage = withUsage[0]!.usage!;
      expect(usage.prompt_tokens).toBeGreaterThan(0);
      expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    },
    messages: async (env, u) => {
      const { events } = await msgStream(env, u, { max_tokens: 100, messages: user("Hi") });
      const delta = events.filter((e): e is Anthropic.MessageDeltaEvent => e.type === "message_delta").at(-1)!;
      expect(delta.usage.output_tokens).toBeGreaterThan(0);
      const start = events[0] as Anthropic.MessageStartEvent;
      expect((delta.usage.input_tokens ?? start.message.usage.input_tokens) > 0).toBe(true);
    },
  },
  "usage without include_usage": {
    chat: async (env, u) => {
      const { chunks } = await chatStream(env, u, { messages: user("Hi") });
      expect(chunks.some((c) => c.usage)).toBe(false);
    },
  },
  "upstream 400": errorScenario(400),
  "upstream 429": errorScenario(429),
  "upstream 500": errorScenario(500),
  "n > 1": {
    chat: async (env, u) => {
      const p = chatOnce(env, u, { messages: user("Hi"), n: 2 });
      if (u !== "anthropic") {
        await p;
        const body = env.last(u).body;
        expect(u === "gemini" ? body.generationConfig.candidateCount : body.n).toBe(2);
        return;
      }
      // Anthropic has no n: refused up front, naming the field.
      const err = await chatStatus(p);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err.error as any).details.field).toBe("n");
    },
  },
};

// The Gemini client's runs join the scenarios of the same name.
for (const [name, run] of Object.entries(GEMINI_RUNS)) (SCENARIOS[name] ??= {}).gemini = run;
