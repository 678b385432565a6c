// An OpenAI-compatible host that sends a tool call's `arguments` as a JSON object instead of the JSON string the
// protocol defines (protocols.md §1.3): chat clients get the string, and a Messages client the input, as from OpenAI.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenLoopback, readRequest, type Loopback } from "./upstreams/http-fake.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const LIVE = testKey("tool-args-object");
const model = "host/objargs";
let upstream: Loopback;
let gw: TestGateway;
let chat: OpenAI;
let messages: Anthropic;

const head = { id: "chatcmpl-o", created: 1, model: "llama3" };
const call = { id: "call_O", type: "function", function: { name: "get_weather", arguments: { city: "Zürich" } } };

async function handle(req: IncomingMessage, res: ServerResponse) {
  const { body } = await readRequest(req);
  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify({
      ...head, object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: "", tool_calls: [call] }, finish_reason: "tool_calls" }],
      usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
    }));
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (choices: unknown[], usage: unknown = null) => res.write(`data: ${JSON.stringify({ ...head, object: "chat.completion.chunk", choices, usage })}\n\n`);
  chunk([{ index: 0, delta: { role: "assistant", content: null }, finish_reason: null }]);
  chunk([{ index: 0, delta: { tool_calls: [{ index: 0, ...call }] }, finish_reason: null }]);
  chunk([{ index: 0, delta: {}, finish_reason: "tool_calls" }]);
  chunk([], { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 });
  res.end("data: [DONE]\n\n");
}

beforeAll(async () => {
  upstream = await listenLoopback((req, res) => void handle(req, res));
  gw = await startTestGateway({
    providers: { host: { protocol: "openai", base_url: `${upstream.origin}/v1`, api_key: "sk-fake" } },
    models: { [model]: { type: "language", tags: ["tool-use"], endpoints: [{ provider: "host", model: "llama3", pricing: { input: "0.000001", output: "0.000002" } }] } },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
  chat = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0 });
  messages = new Anthropic({ apiKey: LIVE, baseURL: `${gw.url}/api`, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
const anthropicTools: Anthropic.Tool[] = [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }];

describe("tool call arguments sent as an object by the upstream", () => {
  it("chat, not streamed: arguments is the JSON string", async () => {
    const res = await chat.chat.completions.create({ model, messages: [{ role: "user", content: "weather?" }], tools });
    const args = (res.choices[0]!.message.tool_calls![0] as any).function.arguments;
    expect(typeof args).toBe("string");
    expect(JSON.parse(args)).toEqual({ city: "Zürich" });
  });

  it("chat, streamed: the SDK's stream helper assembles the JSON string", async () => {
    const done = await chat.chat.completions.stream({ model, messages: [{ role: "user", content: "weather?" }], tools }).finalChatCompletion();
    const args = (done.choices[0]!.message.tool_calls![0] as any).function.arguments;
    expect(JSON.parse(args)).toEqual({ city: "Zürich" });
  });

  it("Messages, not streamed and streamed: the tool_use input is the arguments", async () => {
    const body = { model, max_tokens: 100, messages: [{ role: "user" as const, content: "weather?" }], tools: anthropicTools };
    const res = await messages.messages.create(body);
    expect(res.content.find((b) => b.type === "tool_use")).toMatchObject({ name: "get_weather", input: { city: "Zürich" } });
    const streamed = await messages.messages.stream(body).finalMessage();
    expect(streamed.content.find((b) => b.type === "tool_use")).toMatchObject({ name: "get_weather", input: { city: "Zürich" } });
  });
});
