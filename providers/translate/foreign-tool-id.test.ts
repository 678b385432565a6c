// Tool-call ids other hosts issue (`functions.get_weather:0`) sent back in a chat history to Anthropic or Bedrock
// Converse, which take only [A-Za-z0-9_-]: rewritten alike on the call and its result.
import { describe, expect, it } from "vitest";
import { chatToMessagesRequest } from "./chat-to-messages/request.ts";
import { chatToConverseRequest } from "./chat-to-converse/request.ts";
import { messagesWithSafeToolIds } from "./messages-native-history.ts";
import type { Target } from "../../core/contracts/provider.ts";

const target = (provider: string): Target => ({ modelId: `${provider}/m`, provider, upstreamModel: "m", pricing: { output: "0.000015" }, maxTokens: 8192 });
const history = (ids: string[]) => ({
  model: "m",
  tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }],
  messages: [
    { role: "user", content: "weather?" },
    { role: "assistant", content: null, tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "get_weather", arguments: "{}" } })) },
    ...ids.map((id) => ({ role: "tool", tool_call_id: id, content: "sunny" })),
  ],
});
const ALLOWED = /^[A-Za-z0-9_-]+$/;

/** Two ids sent to Bedrock Converse: each allowed and within 64 characters, the call and its result alike, kept apart. */
function expectConverseIdsWithin64(ids: string[]) {
  const m = (chatToConverseRequest(history(ids), target("bedrock")).body as any).messages;
  const uses = m[1].content.filter((b: any) => b.toolUse).map((b: any) => b.toolUse.toolUseId);
  const results = m[2].content.map((b: any) => b.toolResult.toolUseId);
  for (const id of uses) {
    expect(id).toMatch(ALLOWED);
    expect(id.length).toBeLessThanOrEqual(64);
  }
  expect(results).toEqual(uses);
  expect(new Set(uses).size).toBe(2);
}

describe("foreign tool-call ids", () => {
  const ids = ["functions.get_weather:0", "functions_get_weather_0", "call_x.1:weird"];

  it("Anthropic: every tool_use id and tool_use_id is made of allowed characters, pairs kept, none merged", () => {
    const m = chatToMessagesRequest(history(ids), target("anthropic")).body.messages as any[];
    const uses = m[1].content.map((b: any) => b.id);
    const results = m[2].content.map((b: any) => b.tool_use_id);
    for (const id of uses) expect(id).toMatch(ALLOWED);
    expect(results).toEqual(uses);
    expect(new Set(uses).size).toBe(3);
    expect(uses[1]).toBe("functions_get_weather_0"); // an id Anthropic takes is sent as it is
  });

  it("Bedrock Converse: toolUseId alike", () => {
    const m = (chatToConverseRequest(history(ids), target("bedrock")).body as any).messages;
    const uses = m[1].content.filter((b: any) => b.toolUse).map((b: any) => b.toolUse.toolUseId);
    const results = m[2].content.map((b: any) => b.toolResult.toolUseId);
    for (const id of uses) expect(id).toMatch(ALLOWED);
    expect(results).toEqual(uses);
  });
});

describe("a foreign id near Converse's 64-character limit", () => {
  it("is rewritten within 64 characters, the call and its result alike, two such ids kept apart", () => {
    const long = (c: string) => `call_${"a".repeat(57)}${c}x`; // 64 characters, one of them refused
    const ids = [long(":"), long(".")];
    expectConverseIdsWithin64(ids);
  });
});

describe("a tool-call id over 64 characters, every one allowed", () => {
  // Two ids alike in their first 64 characters, as a host with long ids could issue.
  const ids = [`call_${"b".repeat(70)}_1`, `call_${"b".repeat(70)}_2`];

  it("reaches Bedrock Converse within 64 characters, the call and its result alike, the two kept apart", () => {
    expectConverseIdsWithin64(ids);
  });

  it("a Messages client's history to a native Messages upstream: tool_use and tool_result rewritten alike", () => {
    const body = { messages: [
      { role: "assistant", content: ids.map((id) => ({ type: "tool_use", id, name: "f", input: {} })) },
      { role: "user", content: ids.map((id) => ({ type: "tool_result", tool_use_id: id, content: "ok" })) },
    ] };
    const out = messagesWithSafeToolIds(body).messages;
    const uses = out[0].content.map((b: any) => b.id);
    expect(out[1].content.map((b: any) => b.tool_use_id)).toEqual(uses);
    for (const id of uses) expect(id.length).toBeLessThanOrEqual(64);
    expect(new Set(uses).size).toBe(2);
  });
});
