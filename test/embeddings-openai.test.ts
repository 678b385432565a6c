// Embeddings through an OpenAI-protocol upstream (fake, reference §4.1): base64 on the wire both ways, native
// dimensions, truncation where the catalog allows it, token-limit batch splitting, pass-through and errors.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, cosine, LIVE, mediaConfig, norm } from "./helpers/media.ts";
import { startFakeOpenAIMedia, OPENAI_KEY, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";
import { fakeVector } from "./upstreams/http-fake.ts";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

let up: FakeOpenAIMedia;
let gw: TestGateway;
let client: OpenAI;
/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  up = await startFakeOpenAIMedia();
  gw = await startTestGateway(mediaConfig({ providers: { openai: { protocol: "openai", base_url: up.baseUrl, api_key: OPENAI_KEY } } }));
  client = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
});
afterAll(async () => {
  await gw.close();
  await up.close();
});
beforeEach(() => {
  up.requests.length = 0;
  up.failures.length = 0;
});

describe("embeddings on an OpenAI-protocol upstream", () => {
  it("the official client (default base64) gets the upstream's vectors back exactly, in order", async () => {
    const input = ["first text", "second text", "third"];
    const res = await client.embeddings.create({ model: "openai/text-embedding-3-small", input });
    expect(up.requests).toHaveLength(1);
    expect(up.requests[0]!.body).toMatchObject({ model: "text-embedding-3-small", input, encoding_format: "base64" });
    expect(res.model).toBe("openai/text-embedding-3-small");
    res.data.forEach((d, i) => {
      expect(d.index).toBe(i);
      const want = fakeVector(input[i]!, 1536, "text-embedding-3-small");
      d.embedding.forEach((x, k) => expect(x).toBeCloseTo(want[k]!, 6));
    });
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it("encoding_format float returns JSON floats; unknown fields pass through; user is forwarded", async () => {
    const r = await postJson(`${gw.baseURL}/embeddings`, { model: "openai/text-embedding-3-small", input: "hi", encoding_format: "float", user: "u-1", some_future_flag: true }, auth(LIVE));
    expect(r.status).toBe(200);
    expect(Array.isArray(r.json.data[0].embedding)).toBe(true);
    expect(r.json.data[0].embedding).toHaveLength(1536);
    expect(up.requests[0]!.body).toMatchObject({ user: "u-1", some_future_flag: true, encoding_format: "float" });
    expect(up.requests[0]!.body.providerOptions).toBeUndefined();
  });

  it("passes dimensions natively to models that take it", async () => {
    const res = await client.embeddings.create({ model: "openai/text-embedding-3-small", input: "abc", dimensions: 256 });
    expect(up.requests[0]!.body.dimensions).toBe(256);
    expect(res.data[0]!.embedding).toHaveLength(256);
  });

  it("truncates and re-normalises for models the catalog marks truncate (the upstream never sees dimensions)", async () => {
    const res = await client.embeddings.create({ model: "acme/matryoshka-embed", input: "abc", dimensions: 128 });
    expect(up.requests[0]!.body.dimensions).toBeUndefined();
    const v = res.data[0]!.embedding;
    expect(v).toHaveLength(128);
    expect(norm(v)).toBeCloseTo(1, 5);
    expect(cosine(v, fakeVector("abc", 1536, "acme-embed").slice(0, 128))).toBeCloseTo(1, 5);
    const tooSmall = await postJson(`${gw.baseURL}/embeddings`, { model: "acme/matryoshka-embed", input: "abc", dimensions: 32 }, auth(LIVE));
    expect(tooSmall.status).toBe(422);
  });

  it("422 for a fixed-size model, without calling the upstream", async () => {
    const r = await postJson(`${gw.baseURL}/embeddings`, { model: "acme/fixed-embed", input: "abc", dimensions: 100 }, auth(LIVE));
    expect(r.status).toBe(422);
    expect(r.json.error).toMatchObject({ code: "INVALID_REQUEST", type: "invalid_request_error" });
    expect(up.requests).toHaveLength(0);
  });

  it("splits a batch over the upstream's 300k-token limit and reassembles it in order", async () => {
    const word = (i: number) => `w${i.toString(36)}`;
    const input = Array.from({ length: 2048 }, (_, i) => Array.from({ length: 160 }, (_, k) => word(i * 7 + k)).join(" "));
    const res = await client.embeddings.create({ model: "openai/text-embedding-3-small", input });
    expect(up.requests.length).toBeGreaterThan(1);
    expect(up.requests.reduce((n, r) => n + r.body.input.length, 0)).toBe(2048);
    expect(res.data).toHaveLength(2048);
    for (const i of [0, 1000, 1500, 2047]) {
      expect(res.data[i]!.index).toBe(i);
      expect(cosine(res.data[i]!.embedding, fakeVector(input[i]!, 1536, "text-embedding-3-small"))).toBeCloseTo(1, 5);
    }
    expect(res.usage.prompt_tokens).toBeGreaterThan(300_000);
  });

  it("a flat token-id array is one input: 3000 ids embed as one vector; 2049 token arrays are still refused", async () => {
    const ids = Array.from({ length: 3000 }, (_, i) => (i * 37) % 50_000);
    const r = await postJson(`${gw.baseURL}/embeddings`, { model: "openai/text-embedding-3-small", input: ids }, auth(LIVE));
    expect(r.status, JSON.stringify(r.json.error)).toBe(200);
    expect(r.json.data).toHaveLength(1);
    expect(JSON.stringify(up.requests[0]!.body.input)).toBe(JSON.stringify([ids]));
    const many = await postJson(`${gw.baseURL}/embeddings`, { model: "openai/text-embedding-3-small", input: Array.from({ length: 2049 }, () => [1, 2]) }, auth(LIVE));
    expect(many.status).toBe(400);
    expect(many.json.error).toMatchObject({ code: "INVALID_REQUEST", details: { field: "input" } });
    expect(many.json.error.message).toContain("2048");
    expect(up.requests).toHaveLength(1);
  });

  it("an input over the model's context is refused before the upstream, naming its index", async () => {
    const r = await postJson(`${gw.baseURL}/embeddings`, { model: "openai/text-embedding-3-small", input: ["ok", "ok", "x ".repeat(9000)] }, auth(LIVE));
    expect(r.status).toBe(400);
    expect(r.json.error.details).toMatchObject({ field: "input[2]", index: 2 });
    expect(up.requests).toHaveLength(0);
  });

  it("upstream failures become 502 UPSTREAM_ERROR with the provider's message", async () => {
    up.failures.push({ status: 500 }, { status: 500 }, { status: 500 }); // fallback retries a lone target once
    const r = await postJson(`${gw.baseURL}/embeddings`, { model: "openai/text-embedding-3-small", input: "x" }, auth(LIVE));
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe("UPSTREAM_ERROR");
    expect(r.json.error.message).toContain("fake upstream failure 500");
  });
});
