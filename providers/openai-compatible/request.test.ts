import { describe, expect, it } from "vitest";
import { buildChatRequest } from "./request.ts";
import type { Target } from "../../core/contracts/provider.ts";
import { Unsupported } from "../../core/contracts/translator.ts";
import { responsesToChatRequest } from "../translate/responses-to-chat/request.ts";
import { messagesToChatRequest } from "../translate/messages-to-chat/request.ts";
import { geminiToChatRequest } from "../translate/gemini-to-chat/request.ts";
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";

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

describe("buildChatRequest on a model the gateway knows cannot reason (tags without `reasoning`: GPT-4.1)", () => {
  // OpenAI answers 400 "Unsupported parameter: 'reasoning_effort' is not supported with this model." to any effort.
  const gpt41: Target = { modelId: "openai/gpt-4.1", provider: "openai", upstreamModel: "gpt-4.1", pricing: {}, reasoning: false };
  const config = { protocol: "openai" as const, api_key: "k" };

  it("reasoning_effort (Qwen Code's folded reasoning object, the knob) is not sent, and is named", () => {
    const req = buildChatRequest({ model: "x", messages: [], reasoning_effort: "medium" }, gpt41, config, "openai");
    expect(JSON.parse(req.body as string)).toEqual({ model: "gpt-4.1", messages: [] });
    expect(req.dropped).toEqual(["reasoning_effort"]);
    const knob = buildChatRequest({ model: "x", messages: [], providerOptions: { openai: { reasoningEffort: "low" } } }, gpt41, config, "openai");
    expect(JSON.parse(knob.body as string)).not.toHaveProperty("reasoning_effort");
    expect(knob.dropped).toEqual(["reasoning_effort"]);
  });

  it("a Responses client translated to chat is told reasoning.effort", () => {
    const chat = responsesToChatRequest({ model: "x", input: "hi", reasoning: { effort: "high" } }).body;
    const req = buildChatRequest(chat, gpt41, config, "openai");
    expect(JSON.parse(req.body as string)).not.toHaveProperty("reasoning_effort");
    expect(req.dropped).toEqual(["reasoning.effort"]);
  });

  it("an entry without tags (nothing known), or whose upstream id is an OpenAI reasoning model, keeps the effort", () => {
    const own = buildChatRequest({ model: "x", messages: [], reasoning_effort: "medium" }, { ...gpt41, reasoning: undefined }, config, "openai");
    expect(JSON.parse(own.body as string).reasoning_effort).toBe("medium");
    expect(own.dropped).toEqual([]);
    const o3 = buildChatRequest({ model: "x", messages: [], reasoning_effort: "medium" }, { ...gpt41, upstreamModel: "o3" }, config, "openai");
    expect(JSON.parse(o3.body as string).reasoning_effort).toBe("medium");
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

describe("buildChatRequest to a host that refuses fields it does not know (Mistral: 422 extra_forbidden)", () => {
  const mistral = { protocol: "openai" as const, base_url: "https://api.mistral.ai/v1", api_key: "k" };
  const large: Target = { ...target, modelId: "mistral/mistral-large", upstreamModel: "mistral-large-latest" };
  /** Every field of Mistral's chat request (its API reference / SDK ChatCompletionRequest). */
  const MISTRAL_FIELDS = new Set(["model", "messages", "temperature", "top_p", "max_tokens", "stream", "stop", "random_seed", "metadata", "response_format", "tools", "tool_choice", "presence_penalty", "frequency_penalty", "n", "prediction", "parallel_tool_calls", "reasoning_effort", "prompt_mode", "guardrails", "prompt_cache_key", "safe_prompt"]);

  it("a chat client's OpenAI spelling is renamed (max_completion_tokens, seed), OpenAI-only fields left out and named", () => {
    const req = buildChatRequest({
      model: "x", messages: [{ role: "user", content: "hi" }], stream: true, max_completion_tokens: 20, seed: 7, store: false,
      verbosity: "low", service_tier: "flex", user: "u-1", logprobs: true, top_logprobs: 2, parallel_tool_calls: false, metadata: { a: "b" }, reasoning_effort: "low",
    }, large, mistral, "mistral");
    const sent = JSON.parse(req.body as string);
    expect(sent).toEqual({
      model: "mistral-large-latest", messages: [{ role: "user", content: "hi" }], stream: true, max_tokens: 20, random_seed: 7,
      parallel_tool_calls: false, metadata: { a: "b" }, reasoning_effort: "low",
    });
    expect(Object.keys(sent).filter((k) => !MISTRAL_FIELDS.has(k))).toEqual([]);
    // stream_options (the gateway's own ask: Mistral sends usage unasked) and store: false leave nothing behind.
    expect(req.dropped).toEqual(["verbosity", "service_tier", "user", "logprobs", "top_logprobs"]);
  });

  it("a Responses client's max_output_tokens and text.verbosity (Codex, eca): max_tokens, and text.verbosity named", () => {
    const chat = responsesToChatRequest({ model: "mistral/mistral-large", input: "x", max_output_tokens: 20, text: { verbosity: "low" }, safety_identifier: "h-7", stream: true });
    const req = buildChatRequest(chat.body, large, mistral, "mistral");
    expect(JSON.parse(req.body as string)).toEqual({ model: "mistral-large-latest", messages: [{ role: "user", content: "x" }], max_tokens: 20, stream: true });
    expect(req.dropped).toEqual(["text.verbosity", "safety_identifier"]);
  });

  it("a Messages client's metadata.user_id is named as sent; other hosts get every field as before", () => {
    const chat = messagesToChatRequest({ model: "m", max_tokens: 20, metadata: { user_id: "u-1" }, messages: [{ role: "user", content: "x" }] });
    expect(buildChatRequest(chat.body, large, mistral, "mistral").dropped).toEqual(["metadata.user_id"]);
    const openai = buildChatRequest({ model: "x", messages: [], max_completion_tokens: 20, verbosity: "low", store: true }, target, { protocol: "openai", api_key: "k" }, "openai");
    expect(JSON.parse(openai.body as string)).toMatchObject({ max_completion_tokens: 20, verbosity: "low", store: true });
    expect(openai.dropped).toEqual([]);
  });
});

describe("buildChatRequest: stop sequences, the host's own limit", () => {
  const five = { model: "x", messages: [], stop: ["1", "2", "3", "4", "5"] };
  const refusal = (body: Record<string, any>, config: ProviderConfig): unknown => {
    try {
      buildChatRequest(body, target, config, "up");
    } catch (e) {
      return e;
    }
    return undefined;
  };

  it.each([
    ["OpenAI (no base_url)", { protocol: "openai" } as ProviderConfig],
    ["OpenAI", { protocol: "openai", base_url: "https://api.openai.com/v1" } as ProviderConfig],
    ["Azure OpenAI", { protocol: "openai", flavor: "azure", base_url: "https://res.openai.azure.com" } as ProviderConfig],
    ["Groq", { protocol: "openai", base_url: "https://api.groq.com/openai/v1" } as ProviderConfig],
    ["a provider's max_stop_sequences", { protocol: "openai", base_url: "http://127.0.0.1:1/v1", max_stop_sequences: 4 } as ProviderConfig],
  ])("%s takes 4: more passes the target over (Unsupported), a 400 naming stop; 4 go as sent", (_, config) => {
    const err = refusal(five, config);
    expect(err).toBeInstanceOf(Unsupported);
    expect((err as Unsupported).error).toMatchObject({ status: 400, details: { field: "stop" } });
    const four = buildChatRequest({ ...five, stop: ["1", "2", "3", "4"] }, target, config, "up");
    expect(JSON.parse(four.body as string).stop).toEqual(["1", "2", "3", "4"]);
  });

  it.each([
    ["vLLM / SGLang (no limit)", "http://10.0.0.7:8000/v1"],
    ["DeepSeek (16)", "https://api.deepseek.com/v1"],
    ["xAI", "https://api.x.ai/v1"],
    ["Fireworks", "https://api.fireworks.ai/inference/v1"],
    ["Mistral", "https://api.mistral.ai/v1"],
  ])("%s: 5 go as sent (the host's own refusal, if any, reaches the client)", (_, base_url) => {
    const req = buildChatRequest(five, target, { protocol: "openai", base_url }, "up");
    expect(JSON.parse(req.body as string).stop).toEqual(five.stop);
  });

  it("a translated request's stops are named as its client sent them; a vLLM host takes them", () => {
    const messages = messagesToChatRequest({ model: "m", max_tokens: 20, stop_sequences: five.stop, messages: [{ role: "user", content: "x" }] }, { scope: { flavor: "chat", provider: "up" } });
    expect((refusal(messages.body, { protocol: "openai" }) as Unsupported).error).toMatchObject({ status: 400, details: { field: "stop_sequences" } });
    const gemini = geminiToChatRequest({ contents: [{ role: "user", parts: [{ text: "x" }] }], generationConfig: { stopSequences: five.stop } }, target, { flavor: "chat", provider: "up" }, "up");
    expect((refusal(gemini.body, { protocol: "openai" }) as Unsupported).error).toMatchObject({ status: 400, details: { field: "generationConfig.stopSequences" } });
    const vllm = buildChatRequest(messages.body, target, { protocol: "openai", base_url: "http://10.0.0.7:8000/v1" }, "vllm");
    expect(JSON.parse(vllm.body as string).stop).toEqual(five.stop);
  });
});

describe("buildChatRequest: which fields a host takes is unknown_fields (or its host), not reasoning_field", () => {
  const turn = { role: "assistant", content: "a", reasoning_content: "R" };
  const body = { model: "x", messages: [{ role: "user", content: "hi" }, turn], stream: true, seed: 7, max_completion_tokens: 20, user: "u-1", logprobs: true };

  it("reasoning_field: none on a vLLM host sends reasoning back nowhere, and every other field as sent", () => {
    const req = buildChatRequest(body, target, { protocol: "openai", base_url: "http://10.0.0.7:8000/v1", reasoning_field: "none" }, "vllm");
    expect(JSON.parse(req.body as string)).toEqual({
      model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "a" }], stream: true,
      seed: 7, max_completion_tokens: 20, user: "u-1", logprobs: true, stream_options: { include_usage: true },
    });
    expect(req.dropped).toEqual(["messages[1].reasoning_content"]);
  });

  it("unknown_fields: refused (a proxy in front of Mistral) gets Mistral's fields; reasoning as its reasoning_field says", () => {
    const req = buildChatRequest(body, target, { protocol: "openai", base_url: "http://10.0.0.7:8000/v1", unknown_fields: "refused" }, "up");
    expect(JSON.parse(req.body as string)).toEqual({ model: "gpt-4o-mini", messages: body.messages, stream: true, random_seed: 7, max_tokens: 20 });
    expect(req.dropped).toEqual(["user", "logprobs"]);
  });

  it("api.mistral.ai is recognised; unknown_fields: ignored overrides it", () => {
    const mistral = buildChatRequest(body, target, { protocol: "openai", base_url: "https://api.mistral.ai/v1" }, "mistral");
    expect(JSON.parse(mistral.body as string)).not.toHaveProperty("stream_options");
    const ignored = buildChatRequest(body, target, { protocol: "openai", base_url: "https://api.mistral.ai/v1", unknown_fields: "ignored" }, "mistral");
    expect(JSON.parse(ignored.body as string)).toMatchObject({ seed: 7, max_completion_tokens: 20, user: "u-1", stream_options: { include_usage: true } });
  });
});

describe("buildChatRequest: an OpenAI reasoning model's refused sampling knobs, named as the client sent them", () => {
  const gpt5: Target = { modelId: "openai/gpt-5", provider: "up", upstreamModel: "gpt-5", pricing: {}, reasoning: true };
  const openai: ProviderConfig = { protocol: "openai", api_key: "k" };

  it("a Gemini client's generationConfig.temperature, topP and penalties; a Responses client's and a Messages client's own names", () => {
    const gemini = geminiToChatRequest({ contents: [{ role: "user", parts: [{ text: "x" }] }], generationConfig: { temperature: 0.2, topP: 0.9, presencePenalty: 0.5, frequencyPenalty: 0.5 } }, gpt5, { flavor: "chat", provider: "up" }, "up");
    const g = buildChatRequest(gemini.body, gpt5, openai, "up");
    expect(g.dropped).toEqual(["generationConfig.temperature", "generationConfig.topP", "generationConfig.presencePenalty", "generationConfig.frequencyPenalty"]);
    expect(JSON.parse(g.body as string)).not.toHaveProperty("temperature");
    const responses = responsesToChatRequest({ model: "openai/gpt-5", input: "x", temperature: 0.2, top_p: 0.9 });
    expect(buildChatRequest(responses.body, gpt5, openai, "up").dropped).toEqual(["temperature", "top_p"]);
    const messages = messagesToChatRequest({ model: "m", max_tokens: 20, temperature: 0.2, top_p: 0.9, messages: [{ role: "user", content: "x" }] });
    expect(buildChatRequest(messages.body, gpt5, openai, "up").dropped).toEqual(["temperature", "top_p"]);
    // A chat client's are chat's.
    expect(buildChatRequest({ model: "x", messages: [], temperature: 0.2 }, gpt5, openai, "up").dropped).toEqual(["temperature"]);
  });
});


describe("buildChatRequest: tool-call ids the host refuses (a conversation moved from another provider)", () => {
  const sentIds = (req: { body?: unknown }) => {
    const ms = JSON.parse(req.body as string).messages as any[];
    return { calls: ms.flatMap((m) => (m.tool_calls ?? []).map((c: any) => c.id)), results: ms.filter((m) => m.role === "tool").map((m) => m.tool_call_id) };
  };
  const large: Target = { ...target, modelId: "mistral/mistral-large", upstreamModel: "mistral-large-latest" };

  it("Mistral (only 9 letters or digits) gets Anthropic's toolu_ ids of a Messages client as 9, each result paired with its call", () => {
    const chat = messagesToChatRequest({
      model: "m", max_tokens: 20, messages: [
        { role: "user", content: "weather in Paris and Lyon?" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "w", input: { c: "Paris" } }, { type: "tool_use", id: "toolu_01B19q90qw90lq917835lq9", name: "w", input: { c: "Lyon" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01A09q90qw90lq917835lq9", content: "9C" }, { type: "tool_result", tool_use_id: "toolu_01B19q90qw90lq917835lq9", content: "11C" }] },
      ],
    });
    const { calls, results } = sentIds(buildChatRequest(chat.body, large, { protocol: "openai", base_url: "https://api.mistral.ai/v1", api_key: "k" }, "mistral"));
    expect(calls).toHaveLength(2);
    for (const id of calls) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(calls[0]).not.toBe(calls[1]);
    expect(results).toEqual(calls);
  });

  const long41 = "functions.mcp__github__create_issue_xy:12";
  const long70 = "functions.mcp__atlassian__confluence_create_page_with_attachments_v2:0";
  const history = { model: "x", messages: [
    { role: "user", content: "go" },
    { role: "assistant", content: null, tool_calls: [long41, long70, "call_short"].map((id) => ({ id, type: "function", function: { name: "f", arguments: "{}" } })) },
    ...[long41, long70, "call_short"].map((id) => ({ role: "tool", tool_call_id: id, content: "ok" })),
  ] };

  it("OpenAI chat (ids up to 40 characters) gets a 41- or 70-character id shortened, its result alike; Azure too", () => {
    expect([long41.length, long70.length]).toEqual([41, 70]);
    for (const config of [{ protocol: "openai" as const, api_key: "k" }, { protocol: "openai" as const, flavor: "azure" as const, base_url: "https://llm.corp.example", api_key: "k" }]) {
      const { calls, results } = sentIds(buildChatRequest(history, target, config, "up"));
      expect(calls.map((id: string) => id.length <= 40)).toEqual([true, true, true]);
      expect(calls[2]).toBe("call_short");
      expect(new Set(calls).size).toBe(3);
      expect(results).toEqual(calls);
    }
  });

  it("another host gets the ids as sent; a provider's tool_call_ids (a proxy in front of Mistral) is followed", () => {
    expect(sentIds(buildChatRequest(history, target, { protocol: "openai", base_url: "http://127.0.0.1:8000/v1" }, "up")).calls).toEqual([long41, long70, "call_short"]);
    const proxied = sentIds(buildChatRequest(history, target, { protocol: "openai", base_url: "http://127.0.0.1:8000/v1", tool_call_ids: "mistral" }, "up"));
    for (const id of proxied.calls) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(sentIds(buildChatRequest(history, target, { protocol: "openai", tool_call_ids: "passthrough" }, "up")).calls).toEqual([long41, long70, "call_short"]);
  });
});
