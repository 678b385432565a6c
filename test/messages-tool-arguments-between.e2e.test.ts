// A chat upstream that sends text or reasoning between one tool call's argument fragments (DeepSeek streams
// reasoning_content that way; reference §1.5 asks consumers to tolerate any interleaving), through the gateway to the
// official Anthropic SDK's messages.stream(): the tool_use block must carry every fragment (an agent calling the
// tool with `{}` is what a lost fragment looks like), with one block open at a time, which the SDK's events rely on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import type { FakeOpenAI } from "./upstreams/openai.ts";
import { callSplitByTextAndReasoning, chatChunks } from "./upstreams/openai-scripted-stream.ts";
import { testKey, type TestGateway } from "./helpers/gateway.ts";
import { startScriptedChatGateway } from "./helpers/scripted-chat-gateway.ts";

const KEY = testKey("messages-args-between");
const MODEL = "deepseek/deepseek-reasoner";
const HEADER_FIRST = "deepseek/deepseek-header-first";
let up: FakeOpenAI;
let gw: TestGateway;

/**
 * A call's header (arguments "") first, then reasoning and text before its first argument bytes; then a no-parameter
 * call whose bytes never come, and text after it.
 */
function headerFirst(model: string): unknown[] {
  const { chunk, args, usage } = chatChunks("chatcmpl-header", model);
  return [
    chunk({ role: "assistant", content: null }),
    chunk({ tool_calls: [{ index: 0, id: "call_W1", type: "function", function: { name: "get_weather", arguments: "" } }] }),
    chunk({ reasoning_content: "Paris it is." }),
    chunk({ content: "Checking" }),
    args("{\"city\": "),
    args("\"Paris\"}"),
    chunk({ tool_calls: [{ index: 1, id: "call_N2", type: "function", function: { name: "now", arguments: "" } }] }),
    chunk({ content: " and the time." }),
    chunk({}, "tool_calls"),
    usage,
  ];
}

beforeAll(async () => {
  ({ up, gw } = await startScriptedChatGateway(KEY, { [MODEL]: "deepseek-reasoner", [HEADER_FIRST]: "deepseek-header-first" },
    (rec) => rec.body.model === "deepseek-header-first" ? headerFirst(rec.body.model) : callSplitByTextAndReasoning(rec.body.model, "The user wants weather.")));
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

describe("Messages client <- text and reasoning between one tool call's argument fragments", () => {
  it("messages.stream().finalMessage(): the tool_use input is whole, and the text and reasoning are all there", async () => {
    const client = new Anthropic({ apiKey: KEY, baseURL: gw.baseURL.replace(/\/v1$/, ""), maxRetries: 0 });
    const stream = client.messages.stream({
      model: MODEL, max_tokens: 200, messages: [{ role: "user", content: "Weather in Paris?" }],
      tools: [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" }, unit: { type: "string" } } } }],
    });
    const atStop: unknown[] = [];
    stream.on("contentBlock", (b) => atStop.push(structuredClone(b)));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe("tool_use");
    const tool = final.content.find((b) => b.type === "tool_use");
    expect(tool).toMatchObject({ id: "call_W1", name: "get_weather", input: { city: "Paris", unit: "C" } });
    expect(final.content.map((b) => b.type)).toEqual(["thinking", "tool_use", "thinking", "text"]);
    expect(final.content.filter((b) => b.type === "thinking").map((b) => (b as Anthropic.ThinkingBlock).thinking).join("")).toBe("The user wants weather. Paris it is.");
    expect(final.content.filter((b) => b.type === "text").map((b) => (b as Anthropic.TextBlock).text).join("")).toBe("Checking now.");
    // The SDK's contentBlock event (what reads a tool's input at its stop) saw each block whole.
    expect(atStop).toEqual(final.content);
  });

  it("messages.stream().finalMessage(): reasoning and text between a call's header and its first argument bytes come before its block, which keeps every byte; a no-parameter call gets input {}", async () => {
    const client = new Anthropic({ apiKey: KEY, baseURL: gw.baseURL.replace(/\/v1$/, ""), maxRetries: 0 });
    const stream = client.messages.stream({
      model: HEADER_FIRST, max_tokens: 200, messages: [{ role: "user", content: "Weather in Paris, and the time?" }],
      tools: [
        { name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } },
        { name: "now", input_schema: { type: "object", properties: {} } },
      ],
    });
    const atStop: unknown[] = [];
    stream.on("contentBlock", (b) => atStop.push(structuredClone(b)));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe("tool_use");
    expect(final.content.map((b) => b.type)).toEqual(["thinking", "text", "tool_use", "text", "tool_use"]);
    expect(final.content.filter((b) => b.type === "tool_use")).toMatchObject([
      { id: "call_W1", name: "get_weather", input: { city: "Paris" } },
      { id: "call_N2", name: "now", input: {} },
    ]);
    expect(final.content.filter((b) => b.type === "text").map((b) => (b as Anthropic.TextBlock).text)).toEqual(["Checking", " and the time."]);
    expect(atStop).toEqual(final.content);
  });
});
