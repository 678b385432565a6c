import { describe, expect, it } from "vitest";
import { countTokensBody } from "./count-tokens.ts";
import { identity } from "../../translate/identity/index.ts";
import type { Target } from "../../../core/contracts/provider.ts";

const target = { upstreamModel: "claude-sonnet-4-5" } as Target;
const weatherTool = { name: "get_weather", input_schema: { type: "object" } };

/** A conversation that was on a DeepSeek model through the gateway (its thinking block signed with the gateway's blob), now counted for Claude. */
const crossed = {
  model: "anthropic/claude-sonnet-4.5", max_tokens: 100, thinking: { type: "enabled", budget_tokens: 2048 }, tools: [weatherTool],
  messages: [
    { role: "user", content: "Weather in Paris?" },
    { role: "assistant", content: [
      { type: "thinking", thinking: "The user wants weather.", signature: "mgr1.eyJwIjoiY2hhdCIsIm4iOiJkcyIsImQiOltdfQ" },
      { type: "thinking", thinking: "unsigned", signature: "" },
      { type: "tool_use", id: "call_1__sig__c2ln", name: "get_weather", input: { city: "Paris" } },
    ] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1__sig__c2ln", content: "18C" }] },
  ],
};

describe("countTokensBody", () => {
  it("counts the conversation a generation would send: no gateway-signed or unsigned thinking, tool ids without Gemini's signature, thinking off when the tool loop then lacks it", () => {
    const out = countTokensBody(crossed, target) as any;
    expect(JSON.stringify(out)).not.toContain("mgr1.");
    expect(out.messages[1].content).toEqual([{ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } }]);
    expect(out.messages[2].content[0].tool_use_id).toBe("call_1");
    expect(out.thinking).toEqual({ type: "disabled" });
    expect(out.max_tokens).toBeUndefined();
    expect(out.model).toBe("claude-sonnet-4-5");
  });

  it("is the generation's body but for what the counter refuses", () => {
    const generation = identity("messages").request(crossed, target, {} as any).body as Record<string, unknown>;
    const { max_tokens: _, ...rest } = generation;
    expect(countTokensBody(crossed, target)).toEqual({ ...rest, model: "claude-sonnet-4-5" });
  });

  it("leaves a conversation with nothing to clean as it came", () => {
    const plain = { model: "m", messages: [{ role: "user", content: "Hi" }], thinking: { type: "enabled", budget_tokens: 1024 } };
    expect(countTokensBody(plain, target)).toEqual({ ...plain, model: "claude-sonnet-4-5" });
  });
});
