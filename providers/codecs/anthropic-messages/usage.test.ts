import { describe, expect, it } from "vitest";
import { anthropicDeltaUsage, anthropicMessageUsage, anthropicToOpenAIUsage, fromAnthropicUsage, openAIToAnthropicUsage } from "./usage.ts";
import { relayMessagesStream } from "./stream.ts";
import { costParts } from "../../../core/money/money.ts";
import type { Usage } from "../../../core/contracts/provider.ts";

// The audit's case: 100 000 tokens written to a 1-hour cache on Claude Sonnet 4.5 (catalog prices before
// input_cache_write_1h existed, so the 1-hour price is the default 2x input).
const ONE_HOUR = {
  input_tokens: 10, output_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 100_000,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 100_000 },
};
const SONNET = { input: "0.000003", output: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375" };

describe("usage conversions", () => {
  it("canonical, OpenAI and back without double counting cache tokens", () => {
    const a = { input_tokens: 10, cache_read_input_tokens: 30, cache_creation_input_tokens: 5, output_tokens: 7 };
    expect(fromAnthropicUsage(a)).toEqual({ inputTokens: 10, outputTokens: 7, cacheReadTokens: 30, cacheWriteTokens: 5 });
    const o = anthropicToOpenAIUsage(a);
    expect(o).toMatchObject({ prompt_tokens: 45, completion_tokens: 7, total_tokens: 52 });
    expect(openAIToAnthropicUsage(o)).toEqual(a);
  });

  it("a Messages answer made of chat usage has every field of Anthropic's usage, null where chat does not say; reasoning tokens stay out", () => {
    const chat = { prompt_tokens: 100, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 10 }, completion_tokens_details: { reasoning_tokens: 5 } };
    const counts = { input_tokens: 30, output_tokens: 20, cache_creation_input_tokens: 10, cache_read_input_tokens: 60 };
    expect(anthropicMessageUsage(chat, "default")).toEqual({
      ...counts, cache_creation: null, server_tool_use: null, service_tier: "standard", inference_geo: null, output_tokens_details: null, speed: null,
    });
    expect(anthropicMessageUsage(chat, "priority").service_tier).toBe("priority");
    for (const tier of ["flex", "auto", undefined]) expect(anthropicMessageUsage(chat, tier).service_tier).toBeNull();
    expect(anthropicDeltaUsage(chat)).toEqual({ ...counts, output_tokens_details: null, server_tool_use: null });
  });

  it("1-hour cache writes are told apart from 5-minute ones and cost 2x input: $0.60018, not $0.37518", () => {
    const u = fromAnthropicUsage(ONE_HOUR);
    expect(u).toEqual({ inputTokens: 10, outputTokens: 10, cacheWriteTokens: 100_000, cacheWrite1hTokens: 100_000 });
    expect(costParts(u, SONNET).usd).toBe("0.60018");
    // A mix: 40 000 at 5 minutes (1.25x), 60 000 at 1 hour (2x).
    const mixed = fromAnthropicUsage({ ...ONE_HOUR, cache_creation: { ephemeral_5m_input_tokens: 40_000, ephemeral_1h_input_tokens: 60_000 } });
    expect(mixed).toMatchObject({ cacheWriteTokens: 100_000, cacheWrite1hTokens: 60_000 });
    expect(costParts(mixed, SONNET).usd).toBe("0.51018");
    // The breakdown alone (no cache_creation_input_tokens) still counts every write.
    expect(fromAnthropicUsage({ input_tokens: 1, output_tokens: 1, cache_creation: { ephemeral_5m_input_tokens: 5, ephemeral_1h_input_tokens: 7 } })).toMatchObject({ cacheWriteTokens: 12, cacheWrite1hTokens: 7 });
  });

  it("a stream reports 1-hour writes from message_start and keeps them through message_delta", async () => {
    const reported: Usage[] = [];
    async function* upstream() {
      yield [{ event: "message_start", data: JSON.stringify({ type: "message_start", message: { usage: { ...ONE_HOUR, output_tokens: 1 } } }) }];
      yield [{ event: "message_delta", data: JSON.stringify({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 10 } }) }];
      yield [{ event: "message_stop", data: '{"type":"message_stop"}' }];
    }
    for await (const _ of relayMessagesStream(upstream(), { reportUsage: (u) => reported.push(u), reportFirstToken() {} }, "claude"));
    expect(reported.map((u) => u.cacheWrite1hTokens)).toEqual([100_000, 100_000]);
    expect(costParts(reported.at(-1)!, SONNET).usd).toBe("0.60018");
  });
});
