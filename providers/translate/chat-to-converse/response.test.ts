import { describe, expect, it } from "vitest";
import { converseToChatResponse, finishReasonOf, fromConverseUsage } from "./response.ts";

describe("Converse response -> chat completion", () => {
  it("text, tool calls, signed reasoning, usage with cache tokens", () => {
    const r: any = converseToChatResponse({
      output: { message: { role: "assistant", content: [
        { reasoningContent: { reasoningText: { text: "think", signature: "s1" } } },
        { text: "Let me check." },
        { toolUse: { toolUseId: "tooluse_1", name: "get_weather", input: { city: "Paris" } } },
      ] } },
      stopReason: "tool_use",
      usage: { inputTokens: 10, outputTokens: 20, totalTokens: 60, cacheReadInputTokens: 25, cacheWriteInputTokens: 5 },
    }, "m");
    const c = r.choices[0];
    expect(c.finish_reason).toBe("tool_calls");
    expect(c.message.content).toBe("Let me check.");
    expect(c.message.tool_calls).toEqual([{ id: "tooluse_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }]);
    expect(c.message.reasoning_content).toBe("think");
    expect(c.message.reasoning_details).toEqual([{ type: "reasoning.text", text: "think", signature: "s1", format: "anthropic-claude-v1", index: 0 }]);
    expect(r.usage).toEqual({ prompt_tokens: 40, completion_tokens: 20, total_tokens: 60, prompt_tokens_details: { cached_tokens: 25, cache_write_tokens: 5 } });
  });

  it("parallel_tool_calls: false (oneCall), which Converse cannot be told: two toolUse blocks answer one call, the first", () => {
    const two = {
      output: { message: { role: "assistant", content: [
        { toolUse: { toolUseId: "tooluse_1", name: "get_weather", input: { city: "Paris" } } },
        { toolUse: { toolUseId: "tooluse_2", name: "get_time", input: { city: "Paris" } } },
      ] } },
      stopReason: "tool_use",
      usage: { inputTokens: 10, outputTokens: 20 },
    };
    const r: any = converseToChatResponse(two, "m", 1, undefined, [], true);
    expect(r.choices[0].message.tool_calls).toEqual([{ id: "tooluse_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }]);
    expect(r.choices[0].finish_reason).toBe("tool_calls");
    expect(r.usage.completion_tokens).toBe(20);
    expect((converseToChatResponse(two, "m", 1) as any).choices[0].message.tool_calls).toHaveLength(2);
  });

  it("usage: inputTokens exclude cache reads and writes (billed apart)", () => {
    expect(fromConverseUsage({ inputTokens: 10, outputTokens: 2, cacheReadInputTokens: 7, cacheWriteInputTokens: 3 })).toEqual({ inputTokens: 10, outputTokens: 2, cacheReadTokens: 7, cacheWriteTokens: 3 });
  });

  it("usage: the writes cacheDetails gives a 1h TTL are told apart (they cost more)", () => {
    const u = fromConverseUsage({ inputTokens: 10, outputTokens: 2, cacheWriteInputTokens: 30, cacheDetails: [{ inputTokens: 10, ttl: "5m" }, { inputTokens: 20, ttl: "1h" }] });
    expect(u).toEqual({ inputTokens: 10, outputTokens: 2, cacheWriteTokens: 30, cacheWrite1hTokens: 20 });
  });

  it.each([["end_turn", "stop"], ["stop_sequence", "stop"], ["max_tokens", "length"], ["model_context_window_exceeded", "length"], ["guardrail_intervened", "content_filter"], ["content_filtered", "content_filter"], ["tool_use", "tool_calls"], ["something_new", "stop"]])("%s -> %s", (a, b) => {
    expect(finishReasonOf(a)).toBe(b);
  });
});

describe("the tier that served a Converse answer, as a chat answer's service_tier", () => {
  const tiered = (serviceTier: unknown) => converseToChatResponse({ output: { message: { role: "assistant", content: [{ text: "Hi" }] } }, stopReason: "end_turn", usage: { inputTokens: 1, outputTokens: 1 }, serviceTier }, "m") as any;

  it("serviceTier.type is the service_tier, one chat has no name for passed on as given", () => {
    expect(tiered({ type: "flex" }).service_tier).toBe("flex");
    expect(tiered({ type: "default" }).service_tier).toBe("default");
    expect(tiered({ type: "reserved" }).service_tier).toBe("reserved");
  });

  it("an answer naming no tier has no service_tier", () => {
    expect("service_tier" in tiered(undefined)).toBe(false);
  });
});
