import { describe, expect, it } from "vitest";
import { anthropicErrors } from "./anthropic-sdk-schema.ts";

// A message as the API returns it (null-valued fields left out, as the API does).
const message = {
  id: "msg_01", type: "message", role: "assistant", model: "anthropic/claude-sonnet-4.5",
  content: [
    { type: "thinking", thinking: "Let me see.", signature: "sig" },
    { type: "text", text: "Checking.", citations: null },
    { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" }, caller: { type: "direct" } },
  ],
  stop_reason: "tool_use", stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, service_tier: "standard" },
  providerMetadata: { gateway: { generationId: "gen_1" } },
};

describe("JSON Schema derived from the Anthropic SDK's types", () => {
  it("accepts a message as the API returns it, with the gateway's providerMetadata beside", () => {
    expect(anthropicErrors("Message", message)).toEqual([]);
  });

  it("refuses what the SDK's users could not rely on", () => {
    const bad: Record<string, unknown>[] = [
      { stop_reason: "stop" },
      { usage: { ...message.usage, input_tokens: "12" } },
      { content: [{ type: "thinking", thinking: "no signature" }] },
      { content: [{ type: "tool_use", id: "toolu_1", name: "f", input: {} }] }, // no caller
      { content: [{ type: "text" }] },
      { role: "user" },
    ];
    for (const change of bad) expect(anthropicErrors("Message", { ...message, ...change }), JSON.stringify(change)).not.toEqual([]);
    const { model: _m, ...withoutModel } = message;
    expect(anthropicErrors("Message", withoutModel)).not.toEqual([]);
  });

  it("stream events: each known type with its fields; an unknown type or a missing field is refused", () => {
    const ok = [
      { type: "message_start", message: { ...message, content: [], stop_reason: null } },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "", citations: null } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } },
      { type: "content_block_delta", index: 1, delta: { type: "signature_delta", signature: "sig" } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 3 } },
      { type: "message_stop" },
    ];
    for (const e of ok) expect(anthropicErrors("RawMessageStreamEvent", e), e.type).toEqual([]);
    expect(anthropicErrors("RawMessageStreamEvent", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: {} })).not.toEqual([]);
    expect(anthropicErrors("RawMessageStreamEvent", { type: "content_block_delta", index: 0, delta: { type: "text_delta" } })).not.toEqual([]);
    expect(anthropicErrors("RawMessageStreamEvent", { type: "message_end" })).not.toEqual([]);
  });
});
