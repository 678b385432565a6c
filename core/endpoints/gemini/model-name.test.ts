import { describe, expect, it } from "vitest";
import { isUrlModel, resolveGeminiModel } from "./model-name.ts";

const models = new Map(["anthropic/claude-sonnet-4.5", "google/gemini-2.5-flash", "openai/gpt-x", "azure/gpt-x"].map((id) => [id, {} as any]));

describe("the model a Gemini URL names", () => {
  it("creator/slug raw or with the slash encoded; a models/ prefix; a bare slug when one creator has it", () => {
    expect(resolveGeminiModel("anthropic/claude-sonnet-4.5", models)).toBe("anthropic/claude-sonnet-4.5");
    expect(resolveGeminiModel("anthropic%2Fclaude-sonnet-4.5", models)).toBe("anthropic/claude-sonnet-4.5");
    expect(resolveGeminiModel("models%2Fgoogle%2Fgemini-2.5-flash", models)).toBe("google/gemini-2.5-flash");
    expect(resolveGeminiModel("gemini-2.5-flash", models)).toBe("google/gemini-2.5-flash");
    expect(resolveGeminiModel("unknown-model", models)).toBe("unknown-model"); // the router's 404 names it
  });

  it("an ambiguous slug or broken encoding is a 400 naming model", () => {
    expect(() => resolveGeminiModel("gpt-x", models)).toThrow(expect.objectContaining({ status: 400, message: expect.stringContaining("openai/gpt-x, azure/gpt-x") }));
    expect(() => resolveGeminiModel("bad%E0", models)).toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "model" }) }));
  });

  it("a body's model is the URL's with any number of models/ prefixes (@ai-sdk/google adds one to an id that has one)", () => {
    expect(isUrlModel("models/models/openai/gpt-x", "openai/gpt-x", models)).toBe(true);
    expect(isUrlModel("models/openai/gpt-x", "openai/gpt-x", models)).toBe(true);
    expect(isUrlModel("models/models/azure/gpt-x", "openai/gpt-x", models)).toBe(false);
  });
});
