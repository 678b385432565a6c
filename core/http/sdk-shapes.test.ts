// Shapes the official SDKs type and send (@anthropic-ai/sdk, openai) pass the gateway's own validation: DESIGN §10,
// never a 400 of the gateway's own for what a real client legitimately sends. Each case is the SDK's type, as sent.
import { describe, expect, it } from "vitest";
import { validateCountTokens, validateMessages, validateResponses } from "../generated/validators.js";
import { validationError } from "./validate.ts";

/** The validator's verdict, with the error it would answer when it refuses (so a failure says which field). */
function verdict(validate: any, body: unknown): string {
  return validate(body) ? "ok" : validationError(validate, "INVALID_REQUEST", "anthropic").message;
}

const hi = [{ role: "user", content: "hi" }];
const msg = (extra: Record<string, unknown>) => ({ model: "m", max_tokens: 64, messages: hi, ...extra });

describe("Messages: the Anthropic SDK's thinking configs", () => {
  it.each(["enabled", "disabled", "adaptive", "between_tools"])("thinking.type %s (ThinkingConfigParam)", (type) => {
    const thinking = type === "enabled" ? { type, budget_tokens: 2000 } : { type };
    expect(verdict(validateMessages, msg({ thinking }))).toBe("ok");
    expect(verdict(validateCountTokens, { model: "m", messages: hi, thinking })).toBe("ok");
  });

  it("an unknown thinking type is still refused, in the Messages API's words", () => {
    expect(verdict(validateMessages, msg({ thinking: { type: "sometimes" } }))).toBe("thinking.type: Input should be 'enabled', 'disabled', 'adaptive' or 'between_tools'");
  });
});

describe("Responses: the openai SDK's reasoning efforts", () => {
  it.each(["none", "minimal", "low", "medium", "high", "xhigh", "max", null])("reasoning.effort %s (shared ReasoningEffort)", (effort) => {
    expect(verdict(validateResponses, { model: "m", input: "hi", reasoning: { effort } })).toBe("ok");
  });
});

describe("Messages: typed tools without a name (computer and browser toolsets, the beta mcp_toolset)", () => {
  it.each([
    [{ type: "computer_toolset_20260801" }],
    [{ type: "browser_toolset_20260801" }],
    [{ type: "mcp_toolset", mcp_server_name: "x" }],
    [{ type: "web_search_20250305", name: "web_search", max_uses: 2 }],
  ])("%j passes", (tool) => {
    expect(verdict(validateMessages, msg({ tools: [tool] }))).toBe("ok");
    expect(verdict(validateCountTokens, { model: "m", messages: hi, tools: [tool] })).toBe("ok");
  });

  it("a custom tool still needs its name (and, untyped, its input_schema)", () => {
    expect(verdict(validateMessages, msg({ tools: [{ input_schema: { type: "object" } }] }))).toBe("tools.0.name: Field required");
    expect(verdict(validateMessages, msg({ tools: [{ type: "custom", input_schema: { type: "object" } }] }))).toBe("tools.0.name: Field required");
    expect(verdict(validateMessages, msg({ tools: [{ name: "f" }] }))).toBe("tools.0.input_schema: Field required");
  });
});
