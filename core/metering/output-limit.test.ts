import { describe, expect, it } from "vitest";
import { outputAsk, statedOutputLimit, withinOutputMaximum } from "./output-limit.ts";

const target = { provider: "p", upstreamModel: "m", pricing: { output: "0.00001" }, maxTokens: 8000 };

describe("the output limit a request asks for", () => {
  it("is the largest of every alias, whichever protocol names it; non-positive or non-numeric values are none", () => {
    expect(statedOutputLimit({ max_tokens: 1, max_completion_tokens: 60000 })).toBe(60000);
    expect(statedOutputLimit({ max_completion_tokens: 1, max_tokens: 60000 })).toBe(60000);
    expect(statedOutputLimit({ max_output_tokens: 7, generationConfig: { maxOutputTokens: 9 } })).toBe(9);
    expect(statedOutputLimit({ max_tokens: 10, max_output_tokens: "5000" })).toBe(5000);
    expect(statedOutputLimit({ max_tokens: 0, max_completion_tokens: -3, max_output_tokens: "lots" })).toBeUndefined();
    expect(statedOutputLimit({ max_tokens: 10.2 })).toBe(11);
  });

  it("a Messages upstream always gets max_tokens; a translated client's limit holds the thinking budget", () => {
    expect(outputAsk({}, "chat", "messages", target)).toMatchObject({ limit: 8000, perChoice: 8000, choices: 1 });
    // $0.05 at $10/M output = 5000 thinking tokens: cut below the client's limit, off where the minimum cannot fit.
    expect(outputAsk({ max_tokens: 3000, providerOptions: { p: { thinkingBudget: 0.05 } } }, "chat", "messages", target)).toMatchObject({ limit: 3000, thinking: 2999, perChoice: 3000 });
    expect(outputAsk({ max_tokens: 1, providerOptions: { p: { thinkingBudget: 0.05 } } }, "chat", "messages", target)).toMatchObject({ limit: 1, thinking: undefined, perChoice: 1 });
    expect(outputAsk({ generationConfig: { maxOutputTokens: 20, thinkingConfig: { thinkingBudget: 1024 } } }, "gemini", "messages", { ...target, reasoning: true })).toMatchObject({ limit: 20, thinking: undefined });
    // Without a limit from the client, the model's maximum is raised above the budget.
    expect(outputAsk({ reasoning_effort: "high" }, "chat", "messages", { ...target, maxTokens: 2048 })).toMatchObject({ limit: 6144, thinking: 4096 });
    // A native Messages body: a dollar budget is still added on to its max_tokens.
    expect(outputAsk({ max_tokens: 1, providerOptions: { p: { thinkingBudget: 0.05 } } }, "messages", "messages", target)).toMatchObject({ limit: 5001, thinking: 5000 });
    // A client's own thinking (native) is inside its max_tokens; a dollar budget is not added to it.
    expect(outputAsk({ max_tokens: 3000, thinking: { type: "enabled", budget_tokens: 2000 }, providerOptions: { p: { thinkingBudget: 0.05 } } }, "messages", "messages", target)).toMatchObject({ limit: 3000, thinking: undefined });
    // Translated from messages, `thinking` is dropped and reasoning_effort is not a Messages field.
    expect(outputAsk({ max_tokens: 10, reasoning_effort: "high" }, "messages", "messages", target).thinking).toBeUndefined();
    expect(outputAsk({ max_output_tokens: 10, reasoning: { effort: "high" } }, "responses", "messages", target)).toMatchObject({ limit: 10, thinking: undefined });
    expect(outputAsk({ max_output_tokens: 5000, reasoning: { effort: "high" } }, "responses", "messages", target)).toMatchObject({ limit: 5000, thinking: 4096 });
  });

  it("Converse: thinking only on Claude; no limit from the client leaves it to the model unless thinking needs one", () => {
    expect(outputAsk({ reasoning_effort: "high" }, "chat", "converse", target)).toMatchObject({ limit: undefined, perChoice: undefined, choices: 1 });
    const claude = { ...target, upstreamModel: "us.anthropic.claude-sonnet-4-5-v1:0" };
    expect(outputAsk({ reasoning_effort: "high" }, "chat", "converse", claude)).toMatchObject({ limit: 4096 + 3904, thinking: 4096 });
    expect(outputAsk({ max_tokens: 1, n: 4 }, "chat", "converse", claude)).toMatchObject({ limit: 1, choices: 1 });
    // A client's limit holds the reasoning (as on Messages): the budget goes below it, or off when the minimum cannot fit.
    expect(outputAsk({ max_tokens: 20, reasoning_effort: "low" }, "chat", "converse", claude)).toMatchObject({ limit: 20, thinking: undefined, perChoice: 20 });
    expect(outputAsk({ max_tokens: 3000, reasoning_effort: "high" }, "chat", "converse", claude)).toMatchObject({ limit: 3000, thinking: 2999, perChoice: 3000 });
    expect(outputAsk({ max_output_tokens: 20, reasoning: { effort: "low" } }, "responses", "converse", claude)).toMatchObject({ limit: 20, thinking: undefined });
  });

  it("Gemini: the thinking budget counts beside maxOutputTokens; n is candidateCount; effort none turns thinking off", () => {
    expect(outputAsk({ max_tokens: 100, n: 2, reasoning_effort: "medium" }, "chat", "gemini", target)).toMatchObject({ limit: 100, thinking: 2048, perChoice: 2148, choices: 2 });
    expect(outputAsk({ max_tokens: 100, reasoning_effort: "none" }, "chat", "gemini", target)).toMatchObject({ thinking: 0, perChoice: 100 });
    expect(outputAsk({ n: 2 }, "messages", "gemini", target)).toMatchObject({ perChoice: undefined, choices: 1 });
    // Messages' thinking reaches a model that can think as its effort's budget (what messages-to-chat sends on).
    const thinking = { max_tokens: 100, thinking: { type: "enabled", budget_tokens: 3000 } };
    expect(outputAsk(thinking, "messages", "gemini", { ...target, reasoning: true })).toMatchObject({ thinking: 4096, perChoice: 4196 });
    expect(outputAsk(thinking, "messages", "gemini", target)).toMatchObject({ thinking: undefined, perChoice: 100 });
  });

  it("a translated client's limit above the endpoint's maximum is asked (and reserved) at that maximum; passed through, as sent", () => {
    // Claude Code's max_tokens 32000 on a chat model of 16384: the upstream would refuse it.
    const gpt4o = { ...target, maxTokens: 16384 };
    expect(outputAsk({ max_tokens: 32000 }, "messages", "chat", gpt4o)).toMatchObject({ limit: 16384, perChoice: 16384 });
    expect(outputAsk({ generationConfig: { maxOutputTokens: 32000 } }, "gemini", "converse", { ...target, maxTokens: 10000 })).toMatchObject({ limit: 10000, perChoice: 10000 });
    expect(outputAsk({ max_output_tokens: 32000 }, "responses", "gemini", gpt4o)).toMatchObject({ limit: 16384, perChoice: 16384 });
    expect(outputAsk({ max_completion_tokens: 32000, reasoning_effort: "high" }, "chat", "messages", gpt4o)).toMatchObject({ limit: 16384, thinking: 4096 });
    // Within the maximum, or without one in the catalog, or native: the client's own.
    expect(outputAsk({ max_tokens: 9000 }, "messages", "chat", gpt4o)).toMatchObject({ limit: 9000 });
    expect(outputAsk({ max_tokens: 32000 }, "messages", "chat", { ...target, maxTokens: undefined })).toMatchObject({ limit: 32000 });
    expect(outputAsk({ max_tokens: 32000 }, "chat", "chat", gpt4o)).toMatchObject({ limit: 32000 });
    expect(outputAsk({ max_tokens: 32000 }, "messages", "messages", gpt4o)).toMatchObject({ limit: 32000 });
  });

  it("the body a translator gets has each limit field above the maximum lowered, named as the client sent it", () => {
    const messages = { model: "m", max_tokens: 32000, messages: [] };
    expect(withinOutputMaximum(messages, 16384)).toEqual({ body: { ...messages, max_tokens: 16384 }, lowered: ["max_tokens"] });
    expect(messages.max_tokens).toBe(32000); // the client's body is not changed
    const gemini = { generationConfig: { maxOutputTokens: 32000, temperature: 0 } };
    expect(withinOutputMaximum(gemini, 10000)).toEqual({ body: { generationConfig: { maxOutputTokens: 10000, temperature: 0 } }, lowered: ["generationConfig.maxOutputTokens"] });
    expect(withinOutputMaximum({ max_tokens: 100, max_completion_tokens: 20000 }, 16384).lowered).toEqual(["max_completion_tokens"]);
    expect(withinOutputMaximum({ max_output_tokens: 20000 }, 16384).lowered).toEqual(["max_output_tokens"]);
    const within = { max_tokens: 16384 };
    expect(withinOutputMaximum(within, 16384).body).toBe(within);
    expect(withinOutputMaximum(messages, undefined)).toEqual({ body: messages, lowered: [] });
  });

  it("Gemini: effort none is the least budget on a model that cannot turn thinking off (2.5 Pro: 128), else 0", () => {
    const pro = { ...target, upstreamModel: "gemini-2.5-pro" };
    expect(outputAsk({ max_tokens: 100, reasoning_effort: "none" }, "chat", "gemini", pro)).toMatchObject({ thinking: 128, perChoice: 228 });
    expect(outputAsk({ max_tokens: 100, reasoning: { effort: "none" } }, "responses", "gemini", pro)).toMatchObject({ thinking: 128 });
    expect(outputAsk({ max_tokens: 100, reasoning_effort: "none" }, "chat", "gemini", { ...target, upstreamModel: "gemini-2.5-flash" })).toMatchObject({ thinking: 0, perChoice: 100 });
    expect(outputAsk({ max_tokens: 100, reasoning_effort: "none" }, "chat", "gemini", { ...target, upstreamModel: "gemini-2.5-flash-lite" })).toMatchObject({ thinking: 0 });
  });
});
