// What three client libraries send and read, found with LangChain JS and the Vercel AI SDK (the tests send their
// exact requests with fetch, or use the official SDKs this repository has):
// - @ai-sdk/google and @google/generative-ai (LangChain's ChatGoogleGenerativeAI) put `models/` in the path only for
//   an id without a slash: every gateway id arrives as /v1beta/{creator}/{slug}:{method};
// - @langchain/anthropic reads a stream's input tokens only from message_start, as Anthropic puts the count there;
// - @google/generative-ai ignores a stream's `error` frame: a cut Gemini stream must fail the read itself.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI } from "@google/genai";
import { keyEntry, ledgerRecordOf, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";

const LIVE = testKey("clientlibs");
const SANDBOX = testKey("clientlibs-sbx", true);
const GPT = "openai/gpt-4o-mini";
const CLAUDE = "anthropic/claude-test";
const EMBED = "openai/text-embedding-3-small";
const pricing = { input: "0.000001", output: "0.000002" };

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  gw = await startTestGateway({
    routing: { max_attempts: 1, circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } },
    providers: {
      up: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
      claude: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      sim: { protocol: "sim", sim: { embedding_ms: 1 } },
    },
    models: {
      [GPT]: { type: "language", endpoints: [{ provider: "up", model: "gpt-4o-mini", pricing }] },
      [CLAUDE]: { type: "language", max_tokens: 8192, endpoints: [{ provider: "claude", model: "claude-test", pricing }] },
      [EMBED]: { type: "embedding", context_window: 8191, dimensions: 1536, endpoints: [{ provider: "up", model: "text-embedding-3-small", pricing: { input: "0.00000002" } }] },
    },
    projects: { acme: { keys: [keyEntry("live", LIVE), keyEntry("sbx", SANDBOX)] } },
  });
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await anthropic?.close();
});

const gemini = (path: string, body: unknown, key = LIVE, method = "POST") =>
  fetch(`${gw.url}/api/v1beta/${path}`, {
    method,
    headers: { "x-goog-api-key": key, "content-type": "application/json" },
    body: method === "GET" ? undefined : JSON.stringify(body),
  });
const hi = { contents: [{ role: "user", parts: [{ text: "Hi" }] }] };

describe("Gemini methods with the model id as the path (@ai-sdk/google, ChatGoogleGenerativeAI)", () => {
  it("generateContent, its stream and countTokens answer at /v1beta/{creator}/{slug}:{method}", async () => {
    const one = await gemini(`${GPT}:generateContent`, hi);
    expect(one.status).toBe(200);
    const json = await one.json();
    expect(json.candidates[0].content.parts[0].text.length).toBeGreaterThan(0);
    expect(json.modelVersion).toBe(GPT);
    const stream = await gemini(`${CLAUDE}:streamGenerateContent?alt=sse`, hi);
    expect(stream.status).toBe(200);
    expect(await stream.text()).toContain('"finishReason":"STOP"');
    const count = await gemini(`${GPT}:countTokens`, hi);
    expect(count.status).toBe(200);
    expect((await count.json()).totalTokens).toBeGreaterThan(0);
  });

  it("embeddings both ways the AI SDK sends them: the id as the path, and models/<id> with the body's model models/models/<id>", async () => {
    const requests = (model: string) => ({ requests: ["a", "b"].map((text) => ({ model, content: { role: "user", parts: [{ text }] } })) });
    const byId = await gemini(`${EMBED}:batchEmbedContents`, requests(`models/${EMBED}`), SANDBOX);
    expect(byId.status).toBe(200);
    expect((await byId.json()).embeddings).toHaveLength(2);
    // textEmbedding("models/openai/text-embedding-3-small"): the SDK prefixes models/ to the body's model again.
    const doubled = await gemini(`models/${EMBED}:batchEmbedContents`, requests(`models/models/${EMBED}`), SANDBOX);
    expect(doubled.status).toBe(200);
    expect((await doubled.json()).embeddings).toHaveLength(2);
    const other = await gemini(`models/${EMBED}:batchEmbedContents`, requests(`models/models/${GPT}`), SANDBOX);
    expect(other.status).toBe(400); // another model is still refused
  });

  it("a path that names no catalog model is still a 404 in Google's shape; a GET there is no 405", async () => {
    for (const path of ["tunedModels/my-model:generateContent", "acme/no-such-model:generateContent", `${GPT}:noSuchMethod`]) {
      const res = await gemini(path, hi);
      expect(res.status, path).toBe(404);
      expect((await res.json()).error, path).toMatchObject({ code: 404, status: "NOT_FOUND" });
    }
    expect((await gemini(`${GPT}:generateContent`, undefined, LIVE, "GET")).status).toBe(404);
    // Not {creator}/{slug}:{a method}: the plain 404 of an unknown path, not "no method download on models/{model}".
    for (const path of ["files/abc:download", "batches/abc:cancel"]) {
      const res = await gemini(path, hi);
      expect(res.status, path).toBe(404);
      expect((await res.json()).error.message, path).toMatch(/^No route for POST/);
    }
    // An id with no creator, or percent-encoded: the plain 404, not "no method generateContent/".
    for (const path of ["gpt-4o:generateContent", "openai%2Fgpt-4o:generateContent"]) {
      const res = await gemini(path, hi);
      expect(res.status, path).toBe(404);
      expect((await res.json()).error.message, path).not.toContain("generateContent/");
    }
  });

  it("without a key, a catalog id and a made-up one get the same 401: the catalog is not told to strangers", async () => {
    for (const path of [`${GPT}:generateContent`, "acme/no-such-model:generateContent"]) {
      const res = await fetch(`${gw.url}/api/v1beta/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(hi) });
      expect(res.status, path).toBe(401);
    }
  });

  it("/api/openapi.json lists the id paths beside models/{model}", async () => {
    const doc = await (await fetch(`${gw.url}/api/openapi.json`)).json();
    for (const action of ["generateContent", "streamGenerateContent", "countTokens", "embedContent", "batchEmbedContents"]) {
      const op = doc.paths[`/v1beta/{creator}/{slug}:${action}`]?.post;
      expect(op, action).toBeDefined();
      expect(op.parameters.filter((p: any) => p.in === "path").map((p: any) => p.name)).toEqual(["creator", "slug"]);
      expect(doc.paths[`/v1beta/models/{model}:${action}`].post.operationId).not.toBe(op.operationId);
    }
  });
});

/** A Messages stream's message_start and message_delta usage, read as @langchain/anthropic reads it. */
async function messagesStreamUsage(key: string, model: string, content: string) {
  const res = await fetch(`${gw.baseURL}/messages`, {
    method: "POST",
    headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json", "x-request-id": `req-${Math.random()}` },
    body: JSON.stringify({ model, max_tokens: 100, stream: true, messages: [{ role: "user", content }] }),
  });
  expect(res.status).toBe(200);
  const events = (await res.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
  return { requestId: res.headers.get("x-request-id")!, start: events.find((e) => e.type === "message_start").message.usage, delta: events.find((e) => e.type === "message_delta").usage };
}

describe("a translated Messages stream states its input in message_start (@langchain/anthropic reads it only there)", () => {
  const prompt = "Tell me about the weather in Paris in spring. ".repeat(40);

  it.each([[LIVE, GPT], [SANDBOX, CLAUDE]])("%s %s: message_start has the gateway's estimate, message_delta the exact count, which the ledger bills", async (key, model) => {
    const { requestId, start, delta } = await messagesStreamUsage(key, model, prompt);
    expect(delta.input_tokens).toBeGreaterThan(0);
    // An estimate of the same request: near the upstream's count, never the 0 it was.
    expect(start.input_tokens).toBeGreaterThan(delta.input_tokens * 0.75);
    expect(start.input_tokens).toBeLessThan(delta.input_tokens * 1.5);
    expect(start.output_tokens).toBe(0);
    expect((await ledgerRecordOf(gw, requestId)).inputTokens).toBe(delta.input_tokens);
  });

  it("the official SDK's finalMessage() reports the exact count (message_delta's), not the estimate", async () => {
    const { delta } = await messagesStreamUsage(LIVE, GPT, prompt);
    const client = new Anthropic({ apiKey: LIVE, baseURL: `${gw.url}/api`, maxRetries: 0 });
    const msg = await client.messages.stream({ model: GPT, max_tokens: 100, messages: [{ role: "user", content: prompt }] }).finalMessage();
    expect(msg.usage.input_tokens).toBe(delta.input_tokens);
  });
});

describe("a Gemini stream the upstream cuts mid-answer", () => {
  // Paced, so the first text leaves before the cut (a stream cut before it is answered a plain 502).
  beforeAll(() => void (anthropic.eventDelayMs = 40));
  afterAll(() => void (anthropic.eventDelayMs = 0));
  const cutOnce = () => anthropic.failures.push({ kind: "die-mid-stream", afterEvents: 5 });

  it("ends with the error frame and then a failed read, not a clean end a client could take for a whole answer", async () => {
    cutOnce();
    const res = await gemini(`models/${CLAUDE}:streamGenerateContent?alt=sse`, hi, LIVE);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const failed = await (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return false;
        text += decoder.decode(value, { stream: true });
      }
    })().catch(() => true);
    expect(text).toContain('"text":"Hello"');
    expect(text).toMatch(/data: \{"error":\{"code":502,[^\n]*"status":"UNAVAILABLE"/);
    expect(failed).toBe(true);
    const record = await ledgerRecordOf(gw, res.headers.get("x-request-id"));
    expect(record).toMatchObject({ status: 200, outcome: "stream_error" });
    // As every cut stream: a 502 in the request counter, the upstream attempt an error (not a client's cancel).
    const values = (await gw.gateway.metrics.registry.getSingleMetric("gateway_requests_total")!.get()).values;
    // Other models' series start at 0 (seeded), so this model's own series is the one read.
    expect(values.find((v) => v.labels.endpoint === "gemini" && v.labels.model === CLAUDE && v.labels.code === "502")?.value).toBe(1);
    const attempts = (await gw.gateway.metrics.registry.getSingleMetric("gateway_upstream_duration_seconds")!.get()).values;
    expect(attempts.some((v) => (v as any).metricName === "gateway_upstream_duration_seconds_count" && v.labels.outcome === "cancelled")).toBe(false);
  });

  it("@google/genai still throws its ApiError with the status", async () => {
    cutOnce();
    const ai = new GoogleGenAI({ apiKey: LIVE, httpOptions: { baseUrl: `${gw.url}/api`, retryOptions: { attempts: 1 } } } as any);
    let text = "";
    const err = await (async () => {
      for await (const chunk of await ai.models.generateContentStream({ model: CLAUDE, contents: "Hi" })) text += chunk.text ?? "";
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(502);
    expect(text).toMatch(/^Hello/); // what came before the cut
  });
});
