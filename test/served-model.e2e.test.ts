// Every answer names the gateway model id that served it, never the upstream's own (issue 26, item 1): Claude Code
// keeps signed thinking blocks only on assistant turns of the model it is calling, so `claude-sonnet-4-5` in a
// message_start where it asked for `anthropic/claude-sonnet-4.5` costs it its thinking and the next turn a 400.
// Every endpoint x every upstream protocol x JSON and streamed, against fakes that answer with their own ids as the
// real APIs do; the upstream's id is in providerMetadata.gateway.upstreamModel and the x-mg-upstream-model header.
// Every answer and every stream event here is also checked against the official shapes (item 6): OpenAI's OpenAPI
// description for chat, responses, embeddings and images, the Anthropic SDK's types for messages.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { SseParser, type SseEvent } from "../core/sse/parse.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { OPENAI_KEY, startFakeOpenAIMedia, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { GEMINI_KEY, startFakeGeminiMedia, type FakeGeminiMedia } from "./upstreams/gemini-media.ts";
import { FAKE_AWS, startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";
import { makeServiceAccount, startFakeTokenEndpoint, type FakeTokenEndpoint } from "./upstreams/vertex-auth.ts";
import { startFakeVertex, type FakeVertex } from "./upstreams/vertex.ts";
import { RERANK_KEY, startFakeCohere, startFakeJina, startFakeTogether, startFakeVoyage, type Reranker } from "./upstreams/rerankers.ts";
import { expectOpenAIResponseEvent, expectOpenAIShape } from "./helpers/openai-spec.ts";
import { expectAnthropicShape } from "./helpers/anthropic-sdk-schema.ts";

const KEY = testKey("served-model");
const LLAMA = "us.meta.llama3-3-70b-instruct-v1:0";
const CLAUDE_BEDROCK = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const CLAUDE_VERTEX = "claude-sonnet-4-5@20250929";
const price = { input: "0.000001", output: "0.000002" };

/** Language models: gateway id -> (provider, upstream id). The fakes answer with these upstream ids. */
const LANGUAGE = {
  "openai/gpt-4o": { provider: "oai", upstream: "gpt-4o" },
  "anthropic/claude-sonnet-4.5": { provider: "claude", upstream: "claude-sonnet-4-5" },
  "google/gemini-2.5-flash": { provider: "gem", upstream: "gemini-2.5-flash" },
  "meta/llama-3.3-70b": { provider: "aws", upstream: LLAMA },
  "anthropic/claude-on-bedrock": { provider: "aws", upstream: CLAUDE_BEDROCK },
  "google/gemini-on-vertex": { provider: "vertex", upstream: "gemini-2.5-flash" },
  "anthropic/claude-on-vertex": { provider: "vertex", upstream: CLAUDE_VERTEX },
} as const;
type LanguageModel = keyof typeof LANGUAGE;
const LANGUAGE_MODELS = Object.keys(LANGUAGE) as LanguageModel[];
/** Served through OpenAI's own /responses: the fake answers a dated snapshot, as OpenAI does. */
const NATIVE_RESPONSES = "openai/gpt-5";

const EMBEDDINGS = {
  "openai/text-embedding-3-small": { provider: "oaimedia", upstream: "text-embedding-3-small", extra: { dimensions: 1536 } },
  "google/gemini-embedding-001": { provider: "gemmedia", upstream: "gemini-embedding-001", extra: { dimensions: 3072 } },
  "google/gemini-embedding-on-vertex": { provider: "vertex", upstream: "gemini-embedding-001", extra: { dimensions: 3072 } },
  "amazon/titan-embed-text-v2": { provider: "aws", upstream: "amazon.titan-embed-text-v2:0", extra: { dimensions: 1024 } },
  "cohere/embed-v4": { provider: "cohere", upstream: "embed-v4.0", extra: { dimensions: 1536 } },
  "voyage/voyage-3.5": { provider: "voyage", upstream: "voyage-3.5", extra: { dimensions: 1024 } },
  "together/m2-bert": { provider: "together", upstream: "togethercomputer/m2-bert-80M-8k-retrieval", extra: { dimensions: 768 } },
} as const;
const RERANKERS = {
  "cohere/rerank-v3.5": { provider: "cohere", upstream: "rerank-v3.5" },
  "voyage/rerank-2": { provider: "voyage", upstream: "rerank-2" },
  "jina/jina-reranker-v2": { provider: "jina", upstream: "jina-reranker-v2-base-multilingual" },
  "together/llama-rank": { provider: "together", upstream: "Salesforce/Llama-Rank-V1" },
} as const;
const IMAGES = {
  "openai/gpt-image-1": { provider: "oaimedia", upstream: "gpt-image-1", limits: {} },
  "google/imagen-4": { provider: "gemmedia", upstream: "imagen-4.0-generate-001", limits: {} },
} as const;
const VIDEOS = {
  "openai/sora-2": { provider: "oaimedia", upstream: "sora-2", limits: { durations: [4, 8, 12], poll_initial_ms: 5, poll_max_ms: 20 } },
  "google/veo-3": { provider: "gemmedia", upstream: "veo-3.0-generate-001", limits: { durations: [4, 6, 8], poll_initial_ms: 5, poll_max_ms: 20 } },
} as const;

let gw: TestGateway;
let fakes: {
  oai: FakeOpenAIWithResponses; oaimedia: FakeOpenAIMedia; claude: FakeAnthropic; gem: FakeGemini; gemmedia: FakeGeminiMedia;
  aws: FakeBedrock; vertex: FakeVertex; tokens: FakeTokenEndpoint; rerankers: Reranker[];
};

function endpoints(table: Record<string, { provider: string; upstream: string }>, type: string, extra: (id: string) => Record<string, unknown> = () => ({})) {
  return Object.fromEntries(Object.entries(table).map(([id, m]) => [id, { type, ...extra(id), endpoints: [{ provider: m.provider, model: m.upstream, pricing: price }] }]));
}

beforeAll(async () => {
  const tokens = await startFakeTokenEndpoint();
  const sa = makeServiceAccount(tokens.tokenUri, { projectId: "fake-project" });
  tokens.trust(sa);
  const [cohere, voyage, jina, together] = await Promise.all([startFakeCohere(), startFakeVoyage(), startFakeJina(), startFakeTogether()]);
  fakes = {
    oai: await startFakeOpenAIResponses(), oaimedia: await startFakeOpenAIMedia(), claude: await startFakeAnthropic(), gem: await startFakeGemini(),
    gemmedia: await startFakeGeminiMedia(), aws: await startFakeBedrock(), vertex: await startFakeVertex(tokens, { project: "fake-project", location: "us-east5" }),
    tokens, rerankers: [cohere, voyage, jina, together],
  };
  const rerankProvider = (name: string, f: Reranker) => ({ protocol: name, base_url: f.baseUrl, api_key: RERANK_KEY });
  gw = await startTestGateway({
    server: { signing_secret: "test-signing-secret" },
    routing: { backoff_ms: 1 },
    providers: {
      oai: { protocol: "openai", base_url: fakes.oai.baseUrl, api_key: "sk-fake-upstream" },
      oaimedia: { protocol: "openai", base_url: fakes.oaimedia.baseUrl, api_key: OPENAI_KEY },
      claude: { protocol: "anthropic", base_url: fakes.claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      gem: { protocol: "gemini", base_url: fakes.gem.baseUrl, api_key: FAKE_GEMINI_KEY },
      gemmedia: { protocol: "gemini", base_url: fakes.gemmedia.baseUrl, api_key: GEMINI_KEY },
      aws: { protocol: "bedrock", region: FAKE_AWS.region, aws_access_key_id: FAKE_AWS.accessKeyId, aws_secret_access_key: FAKE_AWS.secretAccessKey, base_url: fakes.aws.baseUrl },
      vertex: { protocol: "vertex", base_url: fakes.vertex.baseUrl, region: "us-east5", credentials_file: "sa.json" },
      cohere: rerankProvider("cohere", cohere), voyage: rerankProvider("voyage", voyage), jina: rerankProvider("jina", jina), together: rerankProvider("together", together),
      // Nothing listens there: a connection refused, which fallback moves on from.
      dead: { protocol: "openai", base_url: "http://127.0.0.1:9/v1", api_key: "sk-x" },
    },
    models: {
      ...endpoints(LANGUAGE, "language", () => ({ max_tokens: 8192 })),
      [NATIVE_RESPONSES]: { type: "language", endpoints: [{ provider: "oai", model: "gpt-5", native_responses: true, pricing: price }] },
      ...endpoints(EMBEDDINGS, "embedding", (id) => ({ dimensions: EMBEDDINGS[id as keyof typeof EMBEDDINGS].extra.dimensions, context_window: 8192 })),
      ...endpoints(RERANKERS, "reranking"),
      ...endpoints(IMAGES, "image"),
      ...endpoints(VIDEOS, "video", (id) => ({ limits: VIDEOS[id as keyof typeof VIDEOS].limits })),
      "acme/broken": { type: "language", endpoints: [{ provider: "dead", model: "broken-1", pricing: price }] },
      "acme/broken-embed": { type: "embedding", dimensions: 1536, endpoints: [{ provider: "dead", model: "broken-embed", pricing: price }] },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)], budget: { usd: "100", period: "day" }, rate_limits: { rpm: 10_000 } } },
  }, { files: { "sa.json": readFileSync(sa.file, "utf8") } });
});

afterAll(async () => {
  await gw?.close();
  if (!fakes) return;
  const { rerankers, ...rest } = fakes;
  await Promise.all([...Object.values(rest), ...rerankers].map((f) => f.close()));
});

const auth = { authorization: `Bearer ${KEY}`, "anthropic-version": "2023-06-01" };
const post = (path: string, body: unknown) => postJson(`${gw.baseURL}${path}`, body, auth);

function events(text: string): SseEvent[] {
  return new SseParser().push(text).filter((e) => e.data !== "[DONE]");
}
const hi = [{ role: "user", content: "Hi" }];

/** What a client of each protocol reads the model from: the JSON answer, and every event of a stream that names one. */
const CLIENTS = {
  chat: {
    path: "/chat/completions",
    body: (model: string) => ({ model, messages: hi }),
    streamed: (evs: SseEvent[]) => evs.map((e) => JSON.parse(e.data)).map((c) => c.model),
    json: (body: unknown) => expectOpenAIShape("CreateChatCompletionResponse", body),
    event: (e: SseEvent) => expectOpenAIShape("CreateChatCompletionStreamResponse", JSON.parse(e.data), "chunk"),
  },
  messages: {
    path: "/messages",
    body: (model: string) => ({ model, max_tokens: 256, messages: hi }),
    streamed: (evs: SseEvent[]) => evs.filter((e) => e.event === "message_start").map((e) => JSON.parse(e.data).message.model),
    json: (body: unknown) => expectAnthropicShape("Message", body),
    // ping is the API's keep-alive, which the SDK skips (not one of its RawMessageStreamEvent types).
    event: (e: SseEvent) => e.event === "ping" || expectAnthropicShape("RawMessageStreamEvent", JSON.parse(e.data), `event ${e.event}`),
  },
  responses: {
    path: "/responses",
    body: (model: string) => ({ model, input: "Hi", store: false }),
    streamed: (evs: SseEvent[]) => evs.filter((e) => /^response\.(created|in_progress|completed)$/.test(e.event ?? "")).map((e) => JSON.parse(e.data).response.model),
    json: (body: unknown) => expectOpenAIShape("Response", body),
    event: (e: SseEvent) => expectOpenAIResponseEvent(JSON.parse(e.data)),
  },
} as const;
type Client = keyof typeof CLIENTS;

async function expectServedJson(client: Client, model: string, upstream: string, body: Record<string, unknown> = CLIENTS[client].body(model)) {
  const r = await post(CLIENTS[client].path, body);
  expect(r.status, r.text).toBe(200);
  CLIENTS[client].json(r.json);
  expect(r.json.model).toBe(model);
  expect(r.json.providerMetadata.gateway.upstreamModel).toBe(upstream);
  expect(r.headers.get("x-mg-upstream-model")).toBe(upstream);
}

async function expectServedStream(client: Client, model: string, upstream: string, body: Record<string, unknown> = CLIENTS[client].body(model)) {
  const r = await post(CLIENTS[client].path, { ...body, stream: true });
  expect(r.status, r.text).toBe(200);
  const evs = events(r.text);
  for (const e of evs) CLIENTS[client].event(e);
  const named = CLIENTS[client].streamed(evs);
  expect(named.length).toBeGreaterThan(0);
  expect(new Set(named)).toEqual(new Set([model]));
  expect(r.headers.get("x-mg-upstream-model")).toBe(upstream);
}

const LANGUAGE_CELLS = (["chat", "messages", "responses"] as const).flatMap((client) => LANGUAGE_MODELS.map((model) => ({ client, model, upstream: LANGUAGE[model].upstream as string })));

describe("chat, messages and responses on every upstream protocol", () => {
  it.each(LANGUAGE_CELLS)("$client on $model (JSON)", ({ client, model, upstream }) => expectServedJson(client, model, upstream));
  it.each(LANGUAGE_CELLS)("$client on $model (stream)", ({ client, model, upstream }) => expectServedStream(client, model, upstream));

  it("responses passed through to OpenAI's own /responses: the gateway id where the upstream named its dated snapshot", async () => {
    await expectServedJson("responses", NATIVE_RESPONSES, "gpt-5-2025-08-07");
    await expectServedStream("responses", NATIVE_RESPONSES, "gpt-5-2025-08-07");
  });
});

describe("embeddings, rerank, images and videos on every upstream that serves them", () => {
  it.each(Object.entries(EMBEDDINGS).map(([model, m]) => ({ model, upstream: m.upstream })))("embeddings on $model", async ({ model, upstream }) => {
    const r = await post("/embeddings", { model, input: ["a cat", "a lighthouse"] });
    expect(r.status, r.text).toBe(200);
    expectOpenAIShape("CreateEmbeddingResponse", r.json);
    expect(r.json.model).toBe(model);
    expect(r.json.providerMetadata.gateway.upstreamModel).toBe(upstream);
    expect(r.headers.get("x-mg-upstream-model")).toBe(upstream);
  });

  it.each(Object.entries(RERANKERS).map(([model, m]) => ({ model, upstream: m.upstream })))("rerank on $model", async ({ model, upstream }) => {
    const r = await post("/rerank", { model, query: "capital of France", documents: ["Paris is the capital of France.", "Bananas."] });
    expect(r.status, r.text).toBe(200);
    expect(r.json.model).toBe(model);
    expect(r.json.providerMetadata.gateway.upstreamModel).toBe(upstream);
  });

  it.each(Object.entries(IMAGES).map(([model, m]) => ({ model, upstream: m.upstream })))("images on $model", async ({ model, upstream }) => {
    const r = await post("/images/generations", { model, prompt: "a koi pond" });
    expect(r.status, r.text).toBe(200);
    expectOpenAIShape("ImagesResponse", r.json);
    expect(r.json.model).toBe(model);
    expect(r.json.providerMetadata.gateway.upstreamModel).toBe(upstream);
  });

  it.each(Object.entries(VIDEOS).map(([model, m]) => ({ model, upstream: m.upstream })))("videos on $model", async ({ model, upstream }) => {
    const r = await post("/videos", { model, prompt: "clouds", duration: 4 });
    expect(r.status, r.text).toBe(200);
    expect(r.json.model).toBe(model);
    expect(r.json.providerMetadata.gateway.upstreamModel).toBe(upstream);
    expect(r.headers.get("x-mg-upstream-model")).toBe(upstream);
  });
});

describe("a fallback model served: the answer names the fallback's id", () => {
  const fallback = { providerOptions: { gateway: { models: ["anthropic/claude-sonnet-4.5"] } } };
  it.each(["chat", "messages", "responses"] as const)("%s, JSON and stream", async (client) => {
    const body = { ...CLIENTS[client].body("acme/broken"), ...fallback };
    await expectServedJson(client, "anthropic/claude-sonnet-4.5", "claude-sonnet-4-5", body);
    await expectServedStream(client, "anthropic/claude-sonnet-4.5", "claude-sonnet-4-5", body);
  });

  it("embeddings", async () => {
    const r = await post("/embeddings", { model: "acme/broken-embed", input: "a cat", providerOptions: { gateway: { models: ["openai/text-embedding-3-small"] } } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.model).toBe("openai/text-embedding-3-small");
    expect(r.json.providerMetadata.gateway.upstreamModel).toBe("text-embedding-3-small");
    const tried = r.json.providerMetadata.gateway.modelAttempts.map((a: any) => a.model);
    expect([tried[0], tried.at(-1)]).toEqual(["acme/broken-embed", "openai/text-embedding-3-small"]);
  });
});
