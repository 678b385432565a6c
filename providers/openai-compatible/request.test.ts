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

describe("buildChatRequest: previous answers' reasoning in the field the host takes", () => {
  const turn = { role: "assistant", content: "", reasoning_content: "R", tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] };
  const body = { model: "x", messages: [{ role: "user", content: "hi" }, turn, { role: "tool", tool_call_id: "c1", content: "ok" }] };

  it("recognised from the base URL (Groq takes `reasoning`), or from a project's own base URL", () => {
    const groq = buildChatRequest(body, target, { protocol: "openai", base_url: "https://api.groq.com/openai/v1", api_key: "k" }, "groq");
    expect(JSON.parse(groq.body as string).messages[1]).toEqual({ role: "assistant", content: "", reasoning: "R", tool_calls: turn.tool_calls });
    expect(groq.dropped).toEqual([]);
    const byok = buildChatRequest(body, { ...target, credentials: { apiKey: "own", baseUrl: "https://api.groq.com/openai/v1" } }, { protocol: "openai", api_key: "k" }, "up");
    expect(JSON.parse(byok.body as string).messages[1].reasoning).toBe("R");
  });

  it("the provider's reasoning_field decides; an unknown host gets the messages as sent", () => {
    const none = buildChatRequest(body, target, { protocol: "openai", base_url: "http://127.0.0.1:1/v1", reasoning_field: "none" }, "up");
    expect(JSON.parse(none.body as string).messages[1]).not.toHaveProperty("reasoning_content");
    expect(none.dropped).toEqual(["messages[1].reasoning_content"]);
    const unknown = buildChatRequest(body, target, { protocol: "openai", base_url: "http://127.0.0.1:1/v1" }, "up");
    expect(JSON.parse(unknown.body as string).messages[1]).toEqual(turn);
  });
});

describe("buildChatRequest on a model that refuses an effort (catalog reasoning_effort: false)", () => {
  const grok: Target = { ...target, modelId: "xai/grok-4", upstreamModel: "grok-4-0709", reasoning: true, acceptsReasoningEffort: false };
  const config = { protocol: "openai" as const, base_url: "https://api.x.ai/v1" };

  it("reasoning_effort (or the provider's reasoningEffort knob) is not sent, and is named", () => {
    const req = buildChatRequest({ model: "x", messages: [], reasoning_effort: "high" }, grok, config, "xai");
    expect(JSON.parse(req.body as string)).toEqual({ model: "grok-4-0709", messages: [] });
    expect(req.dropped).toEqual(["reasoning_effort"]);
    const knob = buildChatRequest({ model: "x", messages: [], providerOptions: { xai: { reasoningEffort: "low" } } }, grok, config, "xai");
    expect(JSON.parse(knob.body as string)).not.toHaveProperty("reasoning_effort");
    expect(knob.dropped).toEqual(["reasoning_effort"]);
  });

  it("a null effort goes silently; a model that takes the knob keeps it", () => {
    const req = buildChatRequest({ model: "x", messages: [], reasoning_effort: null }, grok, config, "xai");
    expect(JSON.parse(req.body as string)).not.toHaveProperty("reasoning_effort");
    expect(req.dropped).toEqual([]);
    const mini = buildChatRequest({ model: "x", messages: [], reasoning_effort: "high" }, { ...grok, upstreamModel: "grok-3-mini", acceptsReasoningEffort: undefined }, config, "xai");
    expect(JSON.parse(mini.body as string).reasoning_effort).toBe("high");
  });
});

describe("buildChatRequest: OpenAI's prompt-cache knobs", () => {
  const body = { model: "x", messages: [{ role: "user", content: "hi" }], prompt_cache_key: "tenant-42", prompt_cache_retention: "24h" };

  it("reach an OpenAI-protocol host as sent", () => {
    const req = buildChatRequest(body, target, { protocol: "openai", api_key: "k" }, "openai");
    expect(JSON.parse(req.body as string)).toMatchObject({ prompt_cache_key: "tenant-42", prompt_cache_retention: "24h" });
    expect(req.dropped).toEqual([]);
  });

  it("Mistral, which refuses the whole request over a field it does not know, gets neither: both are named dropped", () => {
    const req = buildChatRequest(body, target, { protocol: "openai", base_url: "https://api.mistral.ai/v1", api_key: "k" }, "mistral");
    expect(JSON.parse(req.body as string)).not.toHaveProperty("prompt_cache_key");
    expect(JSON.parse(req.body as string)).not.toHaveProperty("prompt_cache_retention");
    expect(req.dropped).toEqual(["prompt_cache_key", "prompt_cache_retention"]);
  });
});
