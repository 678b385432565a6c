// The Gemini API (/api/v1beta/) on the gateway as it ships (gateway.yaml: SQLite store, the full default pipeline,
// the default catalog) with the openai, anthropic and gemini providers on fakes: how a Gemini client authenticates
// and names models, the policies and the ledger exactly as on chat (budget, allowlist, rate limits, idempotency),
// errors in Google's envelope, a stream that fails midway, countTokens, embeddings and the model list.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ulid } from "ulid";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY, SHIPPED_PROJECT } from "./helpers/shipped-config.ts";
import { GeminiApiError, geminiClient, type GeminiClient } from "./helpers/gemini-client.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { GEMINI_KEY as MEDIA_KEY, startFakeGeminiMedia, type FakeGeminiMedia } from "./upstreams/gemini-media.ts";
import { validateGeminiGenerateContentResponse } from "../core/generated/validators.js";
import { SseParser } from "../core/sse/parse.ts";

const BROKE = testKey("gem-broke");
const LIMITED = testKey("gem-limited");
const NARROW = testKey("gem-narrow");
const SANDBOX = testKey("gem-sandbox", true);
const claude = "anthropic/claude-sonnet-4.5";
const hi = { contents: [{ role: "user", parts: [{ text: "Hi" }] }] };

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let media: FakeGeminiMedia;
let gw: TestGateway;
let api: GeminiClient;
const client = (key: string) => geminiClient(`${gw.url}/api`, key);
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}/api/v1beta/${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const ledgerOf = async (requestId: string) => (await gw.gateway.store.ledger({ project: SHIPPED_PROJECT })).filter((e) => e.requestId === requestId);

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  gemini = await startFakeGemini();
  media = await startFakeGeminiMedia();
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.providers.gemini.base_url = gemini.baseUrl;
  // Gemini's embedding model on a fake that embeds (the generation fake does not).
  config.providers.gemedia = { protocol: "gemini", base_url: media.baseUrl, api_key: MEDIA_KEY };
  config.models["google/gemini-embedding-001"] = { type: "embedding", context_window: 2048, dimensions: 3072, endpoints: [{ provider: "gemedia", model: "gemini-embedding-001", pricing: { input: "0.00000015" } }] };
  config.projects.broke = { keys: [keyEntry("gb", BROKE)], budget: { usd: "0.0000001" } };
  config.projects.limited = { keys: [keyEntry("gl", LIMITED, { rate_limits: { rpm: 2 } })] };
  config.projects.narrow = { keys: [keyEntry("gn", NARROW), keyEntry("gs", SANDBOX)], allow_models: ["openai/*"] };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: FAKE_GEMINI_KEY } });
  api = client(SHIPPED_KEY);
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close(), media?.close()]);
});

describe("keys and model names as Gemini clients send them", () => {
  it("the key in x-goog-api-key, ?key= or Bearer; none is a 401 in Google's envelope with the gateway's code", async () => {
    for (const [path, headers] of [
      [`models/${claude}:generateContent`, { "x-goog-api-key": SHIPPED_KEY }],
      [`models/${claude}:generateContent?key=${SHIPPED_KEY}`, {}],
      [`models/${claude}:generateContent`, { authorization: `Bearer ${SHIPPED_KEY}` }],
    ] as const) expect((await post(path, hi, headers)).status).toBe(200);
    const res = await post(`models/${claude}:generateContent`, hi, { "x-api-key": SHIPPED_KEY });
    expect(res.status).toBe(401);
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect((await res.json()).error).toMatchObject({ code: 401, status: "UNAUTHENTICATED", details: [expect.objectContaining({ reason: "INVALID_API_KEY", domain: "model-gateway" })] });
  });

  it("creator/slug raw or %2F-encoded, a bare slug; every answer names the gateway model", async () => {
    const raw = await api.generate(claude, hi);
    expect(validateGeminiGenerateContentResponse(raw)).toBe(true);
    expect(raw.modelVersion).toBe(claude);
    expect(raw.candidates[0].content.parts[0].text).toBe("Hello from the fake Anthropic upstream.");
    expect(anthropic.requests.at(-1)!.body.model).toBe("claude-sonnet-4-5-20250929"); // the catalog's upstream id
    expect((await (await post(`models/${encodeURIComponent(claude)}:generateContent`, hi, { "x-goog-api-key": SHIPPED_KEY })).json()).modelVersion).toBe(claude);
    const bare = await api.generate("gemini-2.5-flash", hi);
    expect(bare.modelVersion).toBe("google/gemini-2.5-flash");
    expect(gemini.requests.at(-1)!.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
  });

  it("unknown model 404, a non-language model 400, no alt=sse 400, an unknown method 404 — each naming what is wrong", async () => {
    const errorOf = async (p: Promise<unknown>) => (await p.then(() => undefined, (e) => e)) as GeminiApiError;
    const unknown = await errorOf(api.generate("nobody/nothing", hi));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ status: "NOT_FOUND", details: expect.arrayContaining([expect.objectContaining({ reason: "MODEL_NOT_FOUND" })]) });
    const embedder = await errorOf(api.generate("openai/text-embedding-3-small", hi));
    expect(embedder.body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
    const noSse = await post(`models/${claude}:streamGenerateContent`, hi, { "x-goog-api-key": SHIPPED_KEY });
    expect(noSse.status).toBe(400);
    expect((await noSse.json()).error.details).toContainEqual(expect.objectContaining({ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [expect.objectContaining({ field: "alt" })] }));
    const method = await post(`models/${claude}:predict`, hi, { "x-goog-api-key": SHIPPED_KEY });
    expect(method.status).toBe(404);
    expect((await method.json()).error).toMatchObject({ code: 404, status: "NOT_FOUND", message: expect.stringContaining("generateContent") });
    const invalid = await errorOf(api.generate(claude, { contents: [{ role: "user", parts: [{ inlineData: { mimeType: "image/png" } }] }] }));
    expect(invalid.body.error.details).toContainEqual(expect.objectContaining({ fieldViolations: [expect.objectContaining({ field: "contents[0].parts[0].inlineData.data" })] }));
  });

  it("a sandbox key reaches the simulator through the Gemini protocol", async () => {
    const r = await client(SANDBOX).generate("openai/gpt-4o-mini", hi);
    expect(r.candidates[0].content.parts[0].text).toContain("Simulated reply");
    expect(r.usageMetadata.promptTokenCount).toBeGreaterThan(0);
  });
});

describe("policies and the ledger, as on chat", () => {
  it("JSON and stream: usage from the upstream in usageMetadata, one ledger record each, rate-limit and cost headers", async () => {
    const res = await post(`models/${claude}:generateContent`, hi, { "x-goog-api-key": SHIPPED_KEY });
    const body = await res.json();
    expect(res.headers.get("x-ratelimit-remaining-requests")).toBeTruthy();
    expect(Number(res.headers.get("x-mg-cost-usd"))).toBeGreaterThan(0);
    const [rec, more] = await ledgerOf(res.headers.get("x-request-id")!);
    expect(more).toBeUndefined();
    expect(rec).toMatchObject({ endpoint: "gemini", model: claude, provider: "anthropic", outcome: "ok", inputTokens: body.usageMetadata.promptTokenCount, outputTokens: body.usageMetadata.candidatesTokenCount });

    const s = await post(`models/${claude}:streamGenerateContent?alt=sse`, hi, { "x-goog-api-key": SHIPPED_KEY });
    expect(s.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await s.text();
    expect(text).not.toContain("[DONE]");
    // Read as an SSE client does (events end with CRLF CRLF on Gemini, as the real API frames them).
    const last = JSON.parse(new SseParser().push(text).at(-1)!.data);
    const [srec] = await ledgerOf(s.headers.get("x-request-id")!);
    expect(srec).toMatchObject({ endpoint: "gemini", outcome: "ok", outputTokens: last.usageMetadata.candidatesTokenCount });
  });

  it("budget 402, allowlist 403, rate limit 429 with RetryInfo and Retry-After: Google's statuses, the gateway's codes", async () => {
    const broke = (await client(BROKE).generate(claude, hi).catch((e) => e)) as GeminiApiError;
    expect(broke.status).toBe(402);
    expect(broke.body.error).toMatchObject({ status: "RESOURCE_EXHAUSTED", details: [expect.objectContaining({ reason: "BUDGET_EXCEEDED" })] });
    const narrow = (await client(NARROW).generate(claude, hi).catch((e) => e)) as GeminiApiError;
    expect(narrow.body.error).toMatchObject({ code: 403, status: "PERMISSION_DENIED", details: expect.arrayContaining([expect.objectContaining({ reason: "MODEL_NOT_ALLOWED" })]) });
    let limited: Response | undefined;
    for (let i = 0; i < 4 && !limited; i++) {
      const r = await post(`models/${claude}:generateContent`, hi, { "x-goog-api-key": LIMITED });
      if (r.status === 429) limited = r;
    }
    expect(limited).toBeDefined();
    expect(Number(limited!.headers.get("retry-after"))).toBeGreaterThan(0);
    const details = (await limited!.json()).error.details;
    expect(details).toContainEqual(expect.objectContaining({ reason: "RATE_LIMITED" }));
    expect(details).toContainEqual({ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: expect.stringMatching(/^\d+s$/) });
  });

  it("an idempotency key replays the answer without calling the upstream; the same key on another model is a 422", async () => {
    const key = ulid();
    const h = { "x-goog-api-key": SHIPPED_KEY, "idempotency-key": key };
    const first = await (await post(`models/${claude}:generateContent`, hi, h)).json();
    const calls = anthropic.requests.length;
    const again = await post(`models/${claude}:generateContent`, hi, h);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(first);
    expect(anthropic.requests.length).toBe(calls);
    expect((await post("models/openai/gpt-4o-mini:generateContent", hi, h)).status).toBe(422);
  });

  it("providerOptions in the body steer the gateway and never reach the upstream: caching auto places Anthropic's markers", async () => {
    const body = { ...hi, systemInstruction: { parts: [{ text: "A long, stable system prompt." }] }, providerOptions: { gateway: { caching: "auto" } } };
    expect((await post(`models/${claude}:generateContent`, body, { "x-goog-api-key": SHIPPED_KEY })).status).toBe(200);
    const sent = anthropic.requests.at(-1)!.body;
    expect(sent.providerOptions).toBeUndefined();
    expect(sent.system.at(-1).cache_control).toEqual({ type: "ephemeral" });
  });

  it("snake_case field names (Google's REST examples) are read as camelCase: a translated target gets the system prompt, settings and tools", async () => {
    const body = {
      system_instruction: { parts: [{ text: "Answer in French." }] },
      contents: [{ role: "user", parts: [{ text: "Weather?" }] }],
      generation_config: { max_output_tokens: 77, stop_sequences: ["END"] },
      tools: [{ function_declarations: [{ name: "get_weather", parameters_json_schema: { type: "object", properties: { city_name: { type: "string" } } } }] }],
      tool_config: { function_calling_config: { mode: "ANY", allowed_function_names: ["get_weather"] } },
    };
    const res = await post(`models/${claude}:generateContent`, body, { "x-goog-api-key": SHIPPED_KEY });
    expect(res.status).toBe(200);
    const sent = anthropic.requests.at(-1)!.body;
    expect(JSON.stringify(sent.system)).toContain("Answer in French.");
    expect(sent.max_tokens).toBe(77);
    expect(sent.stop_sequences).toEqual(["END"]);
    expect(sent.tools).toEqual([expect.objectContaining({ name: "get_weather", input_schema: { type: "object", properties: { city_name: { type: "string" } } } })]);
    expect(sent.tool_choice).toMatchObject({ type: "tool", name: "get_weather" });
    const both = await post(`models/${claude}:generateContent`, { ...hi, generationConfig: { maxOutputTokens: 5 }, generation_config: { max_output_tokens: 9 } }, { "x-goog-api-key": SHIPPED_KEY });
    expect(both.status).toBe(400);
    expect((await both.json()).error.message).toContain("generation_config");
  });

  it("a stream that fails midway ends with Google's error object as its last frame, which the SDK throws on, then a cut connection; the ledger keeps it", async () => {
    anthropic.failures.push({ kind: "error-event", afterEvents: 4 });
    const res = await post(`models/${claude}:streamGenerateContent?alt=sse`, hi, { "x-goog-api-key": SHIPPED_KEY });
    // Read up to the cut (docs/gemini.md "Streams"): the body never ends cleanly.
    const reader = res.body!.getReader();
    let text = "";
    let cut = false;
    for (;;) {
      const step = await reader.read().catch(() => undefined);
      if (!step) cut = true;
      if (!step || step.done) break;
      text += Buffer.from(step.value).toString("utf8");
    }
    expect(cut).toBe(true);
    expect(text.startsWith("data: ")).toBe(true);
    const frames = text.split(/\r?\n\r?\n/).filter(Boolean);
    expect(frames.at(-1)!.startsWith("data: ")).toBe(true);
    const tail = JSON.parse(frames.at(-1)!.slice(6));
    expect(tail.error).toMatchObject({ code: 502, status: "UNAVAILABLE", details: [expect.objectContaining({ reason: "UPSTREAM_ERROR" })] });
    anthropic.failures.push({ kind: "error-event", afterEvents: 4 });
    await expect(api.stream(claude, hi)).rejects.toThrow();
    // A stream that failed is recorded once it has ended, which can be after its client has the error.
    const [rec] = await vi.waitFor(async () => {
      const recs = await ledgerOf(res.headers.get("x-request-id")!);
      expect(recs).toHaveLength(1);
      return recs;
    }, { timeout: 5000, interval: 20 });
    expect(rec!.outcome).toBe("stream_error");
  });
});

describe("countTokens, embeddings and the model list", () => {
  it("countTokens: {contents} and {generateContentRequest}, counted by the model's provider, not billed", async () => {
    const res = await post(`models/${claude}:countTokens`, hi, { "x-goog-api-key": SHIPPED_KEY });
    const body = await res.json();
    expect(body.totalTokens).toBeGreaterThan(0);
    expect(res.headers.get("x-mg-token-count")).toBe("upstream");
    expect(anthropic.requests.at(-1)!.path).toBe("/v1/messages/count_tokens");
    const gRes = await post("models/google/gemini-2.5-flash:countTokens", { generateContentRequest: { model: "models/google/gemini-2.5-flash", ...hi, systemInstruction: { parts: [{ text: "S" }] } } }, { "x-goog-api-key": SHIPPED_KEY });
    const g = await gRes.json();
    expect(g.totalTokens).toBeGreaterThan(0);
    expect(gemini.requests.at(-1)!.body.generateContentRequest.systemInstruction).toEqual({ parts: [{ text: "S" }] });
    // A billed request's record is durable before its response completes: none for either. (Counting the whole
    // ledger instead raced with the record of the previous test's cut stream, written after its client gave up.)
    expect(await ledgerOf(res.headers.get("x-request-id")!)).toEqual([]);
    expect(await ledgerOf(gRes.headers.get("x-request-id")!)).toEqual([]);
  });

  it("batchEmbedContents (what @google/genai sends, the model a bare slug as Gemini CLI names it) and embedContent, in order", async () => {
    const batch = await (await post("models/gemini-embedding-001:batchEmbedContents", { requests: ["a cat", "a kitten"].map((text) => ({ model: "models/gemini-embedding-001", content: { parts: [{ text }] }, taskType: "RETRIEVAL_QUERY", outputDimensionality: 4 })) }, { "x-goog-api-key": SHIPPED_KEY })).json();
    expect(batch.embeddings.map((e: any) => e.values.length)).toEqual([4, 4]);
    const sent = media.requests.at(-1)!.body.requests;
    expect(sent.map((r: any) => [r.content.parts[0].text, r.taskType, r.outputDimensionality])).toEqual([["a cat", "RETRIEVAL_QUERY", 4], ["a kitten", "RETRIEVAL_QUERY", 4]]);
    const one = await (await post("models/google/gemini-embedding-001:embedContent", { content: { parts: [{ text: "a dog" }] } }, { "x-goog-api-key": SHIPPED_KEY })).json();
    expect(one.embedding.values).toHaveLength(3072);
    const wrong = await post("models/gemini-embedding-001:batchEmbedContents", { requests: [{ model: "models/openai/gpt-4o-mini", content: { parts: [{ text: "x" }] } }] }, { "x-goog-api-key": SHIPPED_KEY });
    expect((await wrong.json()).error.details).toContainEqual(expect.objectContaining({ fieldViolations: [expect.objectContaining({ field: "requests[0].model" })] }));
    const image = await post("models/gemini-embedding-001:embedContent", { content: { parts: [{ inlineData: { mimeType: "image/png", data: "AA" } }] } }, { "x-goog-api-key": SHIPPED_KEY });
    expect((await image.json()).error.details).toContainEqual(expect.objectContaining({ fieldViolations: [expect.objectContaining({ field: "content.parts[0]" })] }));
  });

  it("embedContent / batchEmbedContents with no parts or only empty text: Google's 400 naming the content, nothing sent upstream", async () => {
    const sentBefore = media.requests.length;
    const cases: [string, unknown, string][] = [
      ["embedContent", { content: { parts: [] } }, "content.parts"],
      ["embedContent", { content: { parts: [{ text: "" }, { text: "" }] } }, "content.parts"],
      ["batchEmbedContents", { requests: [{ content: { parts: [{ text: "a" }] } }, { content: { parts: [{ text: "" }] } }] }, "requests[1].content.parts"],
      ["batchEmbedContents", { requests: [{ content: {} }] }, "requests[0].content.parts"],
    ];
    for (const [action, body, field] of cases) {
      const r = await post(`models/gemini-embedding-001:${action}`, body, { "x-goog-api-key": SHIPPED_KEY });
      const json = await r.json();
      expect(r.status, JSON.stringify(json)).toBe(400);
      expect(json.error.status).toBe("INVALID_ARGUMENT");
      expect(json.error.details).toContainEqual(expect.objectContaining({ fieldViolations: [expect.objectContaining({ field })] }));
    }
    expect(media.requests.length).toBe(sentBefore);
  });

  it("GET models (paged) and models/{model}: Gemini's Model shape, names the SDK passes back as they are", async () => {
    const page = await (await api.raw("/v1beta/models?pageSize=2")).json();
    expect(page.models).toHaveLength(2);
    expect(page.nextPageToken).toBeTruthy();
    const rest = await (await api.raw(`/v1beta/models?pageSize=1000&pageToken=${page.nextPageToken}`)).json();
    const names = [...page.models, ...rest.models].map((m: any) => m.name);
    expect(names).toContain(`models/${claude}`);
    expect(names).toContain("models/openai/text-embedding-3-small");
    expect(names.some((n: string) => n.includes("gpt-image"))).toBe(false); // nothing this protocol cannot call
    const one = await (await api.raw(`/v1beta/models/${claude}`)).json();
    expect(one).toMatchObject({ name: `models/${claude}`, supportedGenerationMethods: ["generateContent", "streamGenerateContent", "countTokens"], thinking: true });
    expect(one.inputTokenLimit).toBeGreaterThan(0);
    expect((await (await api.raw("/v1beta/models/gemini-2.5-flash")).json()).name).toBe("models/google/gemini-2.5-flash");
    const missing = await api.raw("/v1beta/models/nobody/nothing");
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.status).toBe("NOT_FOUND");
  });

  it("openapi.json describes the Gemini routes", async () => {
    const doc = await (await fetch(`${gw.url}/api/openapi.json`)).json();
    expect(doc.paths["/v1beta/models/{model}:generateContent"].post.requestBody.content["application/json"].schema.$ref).toBe("#/components/schemas/GeminiGenerateContentRequest");
    expect(doc.paths["/v1beta/models/{model}:streamGenerateContent"].post.responses["200"].content["text/event-stream"]).toBeDefined();
    expect(doc.paths["/v1beta/models"].get).toBeDefined();
  });
});
