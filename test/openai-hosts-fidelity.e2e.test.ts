// Requests translated for OpenAI-protocol hosts, through the gateway as it ships (gateway.yaml, the default catalog,
// the full pipeline), with fakes recording what each host is sent: Mistral, which answers 422 extra_forbidden to any
// field it does not know, gets only its own fields (max_tokens, not max_completion_tokens; no verbosity, no
// stream_options) with what was left out named as the client sent it; stop sequences past chat completions' 4 are a
// 400 naming the client's field on an OpenAI model and pass to Claude, which has no such limit; a Messages client's
// assistant prefill, which an OpenAI model does not continue, is named.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "./helpers/shipped-config.ts";

/** Every field of Mistral's chat request (its API reference / SDK ChatCompletionRequest): anything else is a 422. */
const MISTRAL_FIELDS = ["model", "messages", "temperature", "top_p", "max_tokens", "stream", "stop", "random_seed", "metadata", "response_format", "tools", "tool_choice", "presence_penalty", "frequency_penalty", "n", "prediction", "parallel_tool_calls", "reasoning_effort", "prompt_mode", "guardrails", "prompt_cache_key", "safe_prompt"];
const unknownToMistral = (body: Record<string, unknown>) => Object.keys(body).filter((k) => !MISTRAL_FIELDS.includes(k));

let openai: FakeOpenAI;
let mistral: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;
const auth = { authorization: `Bearer ${SHIPPED_KEY}` };
const anthropicAuth = { "x-api-key": SHIPPED_KEY, "anthropic-version": "2023-06-01" };

beforeAll(async () => {
  [openai, mistral, anthropic] = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeAnthropic()]);
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  // The fake listens on loopback, which says nothing about the host: the provider names Mistral's convention.
  config.providers.mistral = { ...config.providers.mistral, base_url: mistral.baseUrl, reasoning_field: "none" };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), MISTRAL_API_KEY: "sk-fake-upstream" } });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), mistral?.close(), anthropic?.close()]);
});

describe("Mistral gets only fields it knows", () => {
  it("Responses (max_output_tokens, text.verbosity): max_tokens, verbosity left out and named text.verbosity", async () => {
    const r = await postJson(`${gw.baseURL}/responses`, { model: "mistral/mistral-large", input: "x", max_output_tokens: 20, text: { verbosity: "low" } }, auth);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get("x-mg-dropped-params")).toBe("text.verbosity");
    const sent = mistral.requests.at(-1)!.body;
    expect(sent.max_tokens).toBe(20);
    expect(unknownToMistral(sent)).toEqual([]);
  });

  it("chat, streamed, with OpenAI's max_completion_tokens and store: no stream_options, max_tokens, nothing named", async () => {
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json", ...auth },
      body: JSON.stringify({ model: "mistral/mistral-large", messages: [{ role: "user", content: "x" }], max_completion_tokens: 30, store: false, stream: true }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(text.trim().endsWith("data: [DONE]")).toBe(true);
    expect(res.headers.get("x-mg-dropped-params")).toBeNull();
    const sent = mistral.requests.at(-1)!.body;
    expect(sent.max_tokens).toBe(30);
    expect(unknownToMistral(sent)).toEqual([]);
  });
});

describe("stop sequences: chat completions' limit of 4 is the upstream's", () => {
  it("a Messages client's 6 stop_sequences on an OpenAI model: 400 naming stop_sequences, nothing sent", async () => {
    const before = openai.requests.length;
    const r = await postJson(`${gw.baseURL}/messages`, { model: "openai/gpt-4.1", max_tokens: 50, messages: [{ role: "user", content: "x" }], stop_sequences: ["1", "2", "3", "4", "5", "6"] }, anthropicAuth);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.message).toContain("stop_sequences");
    expect(openai.requests.length).toBe(before);
  });

  it("a Gemini client's 5 stopSequences on an OpenAI model: 400 naming generationConfig.stopSequences", async () => {
    const r = await postJson(`${gw.baseURL}beta/models/openai/gpt-4.1:generateContent`, { contents: [{ role: "user", parts: [{ text: "x" }] }], generationConfig: { stopSequences: ["1", "2", "3", "4", "5"] } }, { "x-goog-api-key": SHIPPED_KEY });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.message).toContain("generationConfig.stopSequences");
  });

  it("chat: 5 stops reach Claude (no such limit); on an OpenAI model a 400 naming stop", async () => {
    const stop = ["1", "2", "3", "4", "5"];
    const claude = await postJson(`${gw.baseURL}/chat/completions`, { model: "anthropic/claude-sonnet-4.5", messages: [{ role: "user", content: "x" }], stop }, auth);
    expect(claude.status, claude.text).toBe(200);
    expect(anthropic.requests.at(-1)!.body.stop_sequences).toEqual(stop);
    const gpt = await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4.1", messages: [{ role: "user", content: "x" }], stop }, auth);
    expect(gpt.status, gpt.text).toBe(400);
    expect(gpt.json.error.details.field).toBe("stop");
  });
});

describe("a Messages client's assistant prefill on an OpenAI model", () => {
  it("is named in x-mg-dropped-params as the client's message", async () => {
    const r = await postJson(`${gw.baseURL}/messages`, { model: "openai/gpt-4.1", max_tokens: 50, messages: [{ role: "user", content: "JSON please" }, { role: "assistant", content: "{\"answer\":" }] }, anthropicAuth);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get("x-mg-dropped-params")).toBe("messages[1]");
  });
});
