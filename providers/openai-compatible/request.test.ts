import { describe, expect, it } from "vitest";
import { buildChatRequest } from "./request.ts";
import type { Target } from "../../core/contracts/provider.ts";

const target: Target = { modelId: "openai/gpt-4o-mini", provider: "up", upstreamModel: "gpt-4o-mini", pricing: {} };

describe("buildChatRequest", () => {
  it("rewrites only the model, drops providerOptions, and always asks a stream for usage", () => {
    const req = buildChatRequest(
      { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }], stream: true, store: false, providerOptions: { gateway: { order: ["x"] } } },
      target, { protocol: "openai", base_url: "https://api.example.com/v1/", api_key: "sk-1" }, "up",
    );
    expect(req.url).toBe("https://api.example.com/v1/chat/completions");
    expect(req.headers.authorization).toBe("Bearer sk-1");
    expect(JSON.parse(req.body as string)).toEqual({
      model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], stream: true, store: false, stream_options: { include_usage: true },
    });
  });

  it("follows Azure OpenAI conventions: deployment path, api-version query, api-key header", () => {
    const req = buildChatRequest({ model: "x", messages: [] }, target, { protocol: "openai", flavor: "azure", base_url: "https://res.openai.azure.com", api_key: "az-key", api_version: "2024-10-21" }, "azure");
    expect(req.url).toBe("https://res.openai.azure.com/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21");
    expect(req.headers["api-key"]).toBe("az-key");
    expect(req.headers.authorization).toBeUndefined();
  });

  it("uses bring-your-own-key credentials when the target carries them, and maps reasoningEffort", () => {
    const byok = { ...target, credentials: { apiKey: "sk-project", baseUrl: "https://proxy.local/v1" } };
    const req = buildChatRequest({ model: "x", messages: [], providerOptions: { up: { reasoningEffort: "low" } } }, byok, { protocol: "openai", api_key: "sk-gateway" }, "up");
    expect(req.url).toBe("https://proxy.local/v1/chat/completions");
    expect(req.headers.authorization).toBe("Bearer sk-project");
    expect(JSON.parse(req.body as string).reasoning_effort).toBe("low");
  });
});

describe("buildChatRequest on an OpenAI reasoning model (catalog reasoning_model)", () => {
  const o4: Target = { ...target, modelId: "openai/o4-mini", upstreamModel: "o4-mini", reasoningModel: true };
  const config = { protocol: "openai" as const, api_key: "sk-1" };

  it("sends max_tokens as max_completion_tokens and drops the knobs these models refuse, reporting real values", () => {
    const req = buildChatRequest({ model: "x", messages: [], max_tokens: 50, temperature: 0.2, top_p: 1, presence_penalty: 0, logit_bias: { "1": 2 }, seed: 7 }, o4, config, "up");
    expect(JSON.parse(req.body as string)).toEqual({ model: "o4-mini", messages: [], max_completion_tokens: 50, seed: 7 });
    expect(req.dropped).toEqual(["temperature", "logit_bias"]);
  });

  it("keeps a client's own max_completion_tokens, and leaves other models alone", () => {
    const req = buildChatRequest({ model: "x", messages: [], max_tokens: 50, max_completion_tokens: 80 }, o4, config, "up");
    expect(JSON.parse(req.body as string)).toMatchObject({ max_completion_tokens: 80 });
    expect(JSON.parse(req.body as string).max_tokens).toBeUndefined();
    const plain = buildChatRequest({ model: "x", messages: [], max_tokens: 50, temperature: 0.2 }, target, config, "up");
    expect(JSON.parse(plain.body as string)).toMatchObject({ max_tokens: 50, temperature: 0.2 });
    expect(plain.dropped).toEqual([]);
  });

  it("an operator's entry without the flag is fitted from the upstream id; reasoning_model: false opts out", () => {
    const own: Target = { ...target, modelId: "acme/reasoner", upstreamModel: "o4-mini" };
    const fitted = buildChatRequest({ model: "x", messages: [], max_tokens: 50, temperature: 0.2 }, own, config, "up");
    expect(JSON.parse(fitted.body as string)).toEqual({ model: "o4-mini", messages: [], max_completion_tokens: 50 });
    expect(fitted.dropped).toEqual(["temperature"]);
    const optedOut = buildChatRequest({ model: "x", messages: [], max_tokens: 50 }, { ...own, reasoningModel: false }, config, "up");
    expect(JSON.parse(optedOut.body as string)).toEqual({ model: "o4-mini", messages: [], max_tokens: 50 });
  });
});
