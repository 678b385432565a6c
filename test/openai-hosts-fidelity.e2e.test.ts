// Requests translated for OpenAI-protocol hosts, through the gateway as it ships (gateway.yaml, the default catalog,
// the full pipeline), with fakes recording what each host is sent: Mistral, which answers 422 extra_forbidden to any
// field it does not know, gets only its own fields (max_tokens, not max_completion_tokens; no verbosity, no
// stream_options) with what was left out named as the client sent it, and the usage it puts on its last chunk reaches
// an openai SDK client as OpenAI sends it (its own chunk, only if asked); stop sequences past OpenAI's 4 are a 400
// naming the client's field on an OpenAI model and pass to Claude and to a vLLM server, which have no such limit; a
// vLLM server whose operator sends reasoning back nowhere (reasoning_field: none) still gets every other field; a
// Messages client's assistant prefill, which an OpenAI model does not continue, is named.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { ledgerRecordOf, postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "./helpers/shipped-config.ts";

/** Every field of Mistral's chat request (its API reference / SDK ChatCompletionRequest): anything else is a 422. */
const MISTRAL_FIELDS = ["model", "messages", "temperature", "top_p", "max_tokens", "stream", "stop", "random_seed", "metadata", "response_format", "tools", "tool_choice", "presence_penalty", "frequency_penalty", "n", "prediction", "parallel_tool_calls", "reasoning_effort", "prompt_mode", "guardrails", "prompt_cache_key", "safe_prompt"];
const unknownToMistral = (body: Record<string, unknown>) => Object.keys(body).filter((k) => !MISTRAL_FIELDS.includes(k));

let openai: FakeOpenAI;
let mistral: FakeOpenAI;
let vllm: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;
const auth = { authorization: `Bearer ${SHIPPED_KEY}` };
const anthropicAuth = { "x-api-key": SHIPPED_KEY, "anthropic-version": "2023-06-01" };

beforeAll(async () => {
  [openai, mistral, vllm, anthropic] = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeOpenAI(), startFakeAnthropic()]);
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  // The fakes listen on loopback, which says nothing about the host: the providers name the conventions of the hosts
  // they stand in for (api.openai.com and api.mistral.ai are recognised by their URLs).
  config.providers.openai = { ...config.providers.openai, max_stop_sequences: 4 };
  config.providers.mistral = { ...config.providers.mistral, base_url: mistral.baseUrl, reasoning_field: "none", unknown_fields: "refused" };
  // An operator's vLLM server that takes no reasoning back.
  config.providers.vllm = { protocol: "openai", base_url: vllm.baseUrl, api_key: "sk-fake-upstream", reasoning_field: "none" };
  config.models["acme/qwen3"] = { type: "language", endpoints: [{ provider: "vllm", model: "Qwen/Qwen3-8B", pricing: { input: "0.0000001", output: "0.0000002" } }] };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), MISTRAL_API_KEY: "sk-fake-upstream" } });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), mistral?.close(), vllm?.close(), anthropic?.close()]);
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

describe("Mistral's usage on its last chunk reaches an openai SDK client as OpenAI sends it", () => {
  const stream = async (includeUsage: boolean) => {
    const head = { id: "m", object: "chat.completion.chunk", created: 1, model: "mistral-large-latest" };
    mistral.hook = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end([
        { ...head, choices: [{ index: 0, delta: { role: "assistant", content: "hello mistral" }, finish_reason: null }] },
        { ...head, choices: [{ index: 0, delta: { content: "" }, finish_reason: "stop" }], usage: { prompt_tokens: 7, completion_tokens: 900, total_tokens: 907 } },
      ].map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n");
      return true;
    };
    try {
      const client = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: gw.baseURL, maxRetries: 0 });
      const id = `mistral-usage-${includeUsage}`;
      const s = await client.chat.completions.create(
        { model: "mistral/mistral-large", messages: [{ role: "user", content: "x" }], stream: true, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) },
        { headers: { "x-request-id": id } },
      );
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const c of s) chunks.push(c);
      return { chunks, record: await ledgerRecordOf(gw, id) };
    } finally {
      mistral.hook = undefined;
    }
  };

  it("not asked: no chunk carries usage; the 900 output tokens are billed", async () => {
    const { chunks, record } = await stream(false);
    expect(chunks.map((c) => c.choices[0]?.delta?.content).join("")).toBe("hello mistral");
    expect(chunks.filter((c) => c.usage)).toEqual([]);
    expect(record.outputTokens).toBe(900);
  });

  it("include_usage: the usage comes last in a chunk of its own (choices: []), as from OpenAI", async () => {
    const { chunks, record } = await stream(true);
    const withUsage = chunks.filter((c) => c.usage);
    expect(withUsage).toHaveLength(1);
    expect(withUsage[0]).toBe(chunks.at(-1));
    expect(withUsage[0]).toMatchObject({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 900 } });
    expect(record.outputTokens).toBe(900);
  });
});

describe("a vLLM server (no stop limit, takes what OpenAI's API has) with reasoning_field: none", () => {
  it("a Messages client's 5 stop_sequences reach it as sent", async () => {
    const stop = ["1", "2", "3", "4", "5"];
    const r = await postJson(`${gw.baseURL}/messages`, { model: "acme/qwen3", max_tokens: 50, messages: [{ role: "user", content: "x" }], stop_sequences: stop }, anthropicAuth);
    expect(r.status, r.text).toBe(200);
    expect(vllm.requests.at(-1)!.body.stop).toEqual(stop);
  });

  it("a chat client's seed, max_completion_tokens, user and logprobs reach it as sent, nothing named", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: "acme/qwen3", messages: [{ role: "user", content: "x" }], seed: 5, max_completion_tokens: 100, user: "u1", logprobs: true, stop: ["1", "2", "3", "4", "5", "6"] }, auth);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get("x-mg-dropped-params")).toBeNull();
    expect(vllm.requests.at(-1)!.body).toMatchObject({ seed: 5, max_completion_tokens: 100, user: "u1", logprobs: true, stop: ["1", "2", "3", "4", "5", "6"] });
  });
});

describe("stop sequences: OpenAI's limit of 4 is the upstream's", () => {
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
