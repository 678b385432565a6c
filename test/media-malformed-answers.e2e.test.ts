// Malformed 200 answers to embeddings and images on the shipped config (openai/text-embedding-3-small and
// openai/gpt-image-1 on openai): a vector that is a string, an undecodable b64_json, no images at all were served
// with 200 and billed (or, for a missing image, a 502 never retried). Each is now a 502 UPSTREAM_ERROR with
// details.reason invalid_answer, retried (the lone endpoint's one retry), one ledger record at $0. And an upstream's
// usage as a string ("3") billed $0: the input's estimate is billed instead.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ledgerRecordOf, postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, SHIPPED_KEY, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeOpenAIMedia, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";

let openai: FakeOpenAIMedia;
let anthropic: FakeAnthropic;
let gw: TestGateway;
const auth = { authorization: `Bearer ${SHIPPED_KEY}` };

beforeAll(async () => {
  openai = await startFakeOpenAIMedia();
  anthropic = await startFakeAnthropic();
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  // Each case fails the endpoint twice on purpose: the circuit must not open between them.
  config.routing = { ...config.routing, circuit_breaker: { ...config.routing?.circuit_breaker, consecutive_failures: 1000, min_requests: 1000 } };
  gw = await startTestGateway(config, { env: providerEnv(config) });
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await anthropic?.close();
});
beforeEach(() => {
  openai.requests.length = 0;
  openai.failures.length = 0;
});

const answer = (body: unknown) => ({ status: 200, body });

async function expectInvalidAnswer(path: string, body: Record<string, unknown>, endpoint: string) {
  const r = await postJson(`${gw.baseURL}${path}`, body, auth);
  expect(r.status, r.text).toBe(502);
  expect(r.json.error.code).toBe("UPSTREAM_ERROR");
  expect(r.json.error.details.reason).toBe("invalid_answer");
  expect(openai.requests).toHaveLength(2);
  const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
  expect(record).toMatchObject({ endpoint, status: 502, outcome: "error", costPico: 0n, attempts: 2 });
}

describe("a malformed embeddings answer", () => {
  it("a vector that is a string is a retried 502 invalid_answer, not served or billed", async () => {
    const bad = answer({ object: "list", data: [{ object: "embedding", index: 0, embedding: "abc" }], usage: { prompt_tokens: 1, total_tokens: 1 } });
    openai.failures.push(bad, bad);
    await expectInvalidAnswer("/embeddings", { model: "openai/text-embedding-3-small", input: "hello", encoding_format: "float" }, "embeddings");
  });

  it("a vector with a null in it, or fewer vectors than inputs, is refused the same way", async () => {
    const holes = answer({ object: "list", data: [{ object: "embedding", index: 0, embedding: [1, "x", null] }], usage: { prompt_tokens: 1, total_tokens: 1 } });
    openai.failures.push(holes, holes);
    await expectInvalidAnswer("/embeddings", { model: "openai/text-embedding-3-small", input: "hello", encoding_format: "float" }, "embeddings");
    openai.requests.length = 0;
    const none = answer({ object: "list", data: [], usage: { prompt_tokens: 1, total_tokens: 1 } });
    openai.failures.push(none, none);
    await expectInvalidAnswer("/embeddings", { model: "openai/text-embedding-3-small", input: "hello", encoding_format: "float" }, "embeddings");
  });

  it("usage as a string bills the input's estimate, not 0", async () => {
    openai.failures.push(answer({ object: "list", data: [{ object: "embedding", index: 0, embedding: [0.6, 0.8] }], usage: { prompt_tokens: "3", total_tokens: "3" } }));
    const r = await postJson(`${gw.baseURL}/embeddings`, { model: "openai/text-embedding-3-small", input: "hello there, general kenobi", encoding_format: "float" }, auth);
    expect(r.status, r.text).toBe(200);
    expect(r.json.data[0].embedding).toHaveLength(2);
    expect(r.json.usage.prompt_tokens).toBeGreaterThan(0);
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.inputTokens).toBe(r.json.usage.prompt_tokens);
    expect(record.costPico).toBeGreaterThan(0n);
  });
});

describe("a malformed image answer", () => {
  it("a b64_json that is not base64 is a retried 502 invalid_answer, not billed", async () => {
    const bad = answer({ created: 1, data: [{ b64_json: "!!!notbase64!!!" }] });
    openai.failures.push(bad, bad);
    await expectInvalidAnswer("/images/generations", { model: "openai/gpt-image-1", prompt: "a lighthouse" }, "images");
  });

  it("no images, or an image without data, is retried too", async () => {
    const none = answer({ created: 1, data: [] });
    openai.failures.push(none, none);
    await expectInvalidAnswer("/images/generations", { model: "openai/gpt-image-1", prompt: "a lighthouse" }, "images");
    openai.requests.length = 0;
    const empty = answer({ created: 1, data: [{}] });
    openai.failures.push(empty, empty);
    await expectInvalidAnswer("/images/generations", { model: "openai/gpt-image-1", prompt: "a lighthouse" }, "images");
  });
});
