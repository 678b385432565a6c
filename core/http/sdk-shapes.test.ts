// Shapes the official SDKs type and send (@anthropic-ai/sdk, openai) pass the gateway's own validation: DESIGN §10,
// never a 400 of the gateway's own for what a real client legitimately sends. Each case is the SDK's type, as sent.
import { describe, expect, it } from "vitest";
import { validateChatCompletions, validateCountTokens, validateImages, validateMessages, validateResponses } from "../generated/validators.js";
import { imagesEndpoint } from "../endpoints/images.ts";
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

describe("Chat: providerOptions.<provider>.reasoningEffort takes what reasoning_effort takes (the AI SDK's and opencode's knob)", () => {
  it.each(["none", "minimal", "low", "medium", "high", "xhigh", "max"])("reasoningEffort %s", (effort) => {
    const body = { model: "m", messages: hi, providerOptions: { openai: { reasoningEffort: effort } } };
    expect(verdict(validateChatCompletions, body)).toBe("ok");
    expect(verdict(validateChatCompletions, { model: "m", messages: hi, reasoning_effort: effort })).toBe("ok");
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

describe("Messages: content blocks of types the gateway does not know pass (docs/messages.md: to Anthropic as sent)", () => {
  const turn = (content: unknown[]) => msg({ messages: [{ role: "user", content: "hi" }, { role: "assistant", content }, { role: "user", content: "again" }] });
  it.each([
    ["compaction (beta)", { type: "compaction", content: "summary" }],
    ["mcp_tool_listing (beta)", { type: "mcp_tool_listing", server_name: "x", tools: [] }],
    ["advisor_tool_result (beta)", { type: "advisor_tool_result", tool_use_id: "t", content: [] }],
    ["fallback (beta)", { type: "fallback", model: "x" }],
  ])("%s", (_name, block) => {
    expect(verdict(validateMessages, turn([block, { type: "text", text: "x" }]))).toBe("ok");
  });

  it("tool_reference inside a tool_result (ToolReferenceBlockParam)", () => {
    const body = msg({ messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "tool_use", id: "tu1", name: "f", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "tu1", content: [{ type: "tool_reference", tool_name: "f" }] }] },
    ] });
    expect(verdict(validateMessages, body)).toBe("ok");
    expect(verdict(validateCountTokens, { model: "m", messages: body.messages })).toBe("ok");
  });

  it("a block of a known type is still checked strictly, and a block needs a string type", () => {
    const user = (content: unknown[]) => msg({ messages: [{ role: "user", content }] });
    expect(verdict(validateMessages, user([{ type: "text" }]))).toBe("messages.0.content.0.text: Field required");
    expect(verdict(validateMessages, user([{ type: "image", source: { type: "base64", media_type: "image/bmp", data: "AAAA" } }]))).toBe("messages.0.content.0.source.media_type: Input should be 'image/jpeg', 'image/png', 'image/webp' or 'image/gif'");
    expect(verdict(validateMessages, user([{ type: "tool_result", tool_use_id: "t", content: [{ type: "text" }] }]))).toBe("messages.0.content.0.content.0.text: Field required");
    expect(verdict(validateMessages, user([{ type: 5 }]))).toBe("messages.0.content.0.type: Input should be a valid string");
    expect(verdict(validateMessages, user(["str"]))).toBe("messages.0.content.0: Input should be a valid dictionary");
  });
});

describe("null where the SDKs type a field nullable is taken as not sent", () => {
  it("Messages cache_control: null on a system part, a tool, and every kind of block", () => {
    const body = msg({
      system: [{ type: "text", text: "s", cache_control: null }],
      tools: [{ name: "f", input_schema: { type: "object" }, cache_control: null }],
      messages: [
        { role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/a.png" }, cache_control: null }, { type: "text", text: "q", cache_control: null }] },
        { role: "assistant", content: [{ type: "tool_use", id: "tu1", name: "f", input: {}, cache_control: null }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "tu1", content: "r", cache_control: null }, { type: "document", source: { type: "text", media_type: "text/plain", data: "d" }, cache_control: null }] },
      ],
    });
    expect(verdict(validateMessages, body)).toBe("ok");
    expect(verdict(validateMessages, msg({ system: [{ type: "text", text: "s", cache_control: { type: "persistent" } }] }))).toBe("system.0.cache_control.type: Input should be 'ephemeral'");
  });

  it("Responses input_image detail: null, in a message and in a function_call_output", () => {
    const input = [
      { role: "user", content: [{ type: "input_image", image_url: "https://example.com/a.png", detail: null }] },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: [{ type: "input_image", image_url: "https://example.com/a.png", detail: null }] },
    ];
    expect(validateResponses({ model: "m", input })).toBe(true);
  });

  it("images: n, size, quality, style and response_format null pass, and are gone before the endpoint reads them", () => {
    const body: Record<string, unknown> = { model: "m", prompt: "a cat", n: null, size: null, quality: null, style: null, response_format: null };
    expect(validateImages(body)).toBe(true);
    imagesEndpoint.prepare!({ body } as any);
    expect(body).toEqual({ model: "m", prompt: "a cat" });
  });
});

describe("Responses: input is optional, as in the openai SDK (a stored prompt may hold it)", () => {
  it("model and prompt alone pass; model is still required", () => {
    expect(validateResponses({ model: "m", prompt: { id: "pmpt_1", version: "2" } })).toBe(true);
    expect(validateResponses({ prompt: { id: "pmpt_1" } })).toBe(false);
  });
});
