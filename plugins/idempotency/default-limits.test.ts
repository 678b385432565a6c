// With the default limits, ordinary answers a client retries are replayed, as the spec's 24-hour idempotency window
// promises: a batch of 150 OpenAI-sized embeddings (1536 dense floats each, ~4.8 MB of JSON) and a long stream
// (~6 MB of SSE, a 32k-token reasoning answer's size). Under the old 4 MiB limit both retries were 422
// answer_too_large_to_replay.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ulid } from "ulid";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, policyConfig } from "../../test/helpers/policy-config.ts";

/** OpenAI's /embeddings with real-sized vectors: 1536 floats each, as text-embedding-3-small returns them. */
function embeddings(fake: FakeOpenAI): void {
  fake.hook = (req, res) => {
    if (req.path !== "/v1/embeddings") return false;
    const inputs: string[] = req.body.input;
    const data = inputs.map((_, index) => ({ object: "embedding", index, embedding: Array.from({ length: 1536 }, () => Math.random() * 0.2 - 0.1) }));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ object: "list", data, model: req.body.model, usage: { prompt_tokens: 3 * inputs.length, total_tokens: 3 * inputs.length } }));
    return true;
  };
}

/** ~6 MB of answer in 60 pieces (the fake sends at most max_tokens pieces). */
const LONG = Array.from({ length: 60 }, (_, i) => ` step ${i}:${" reasoning".repeat(10_000)}`);

describe("idempotency: the default record limits", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    embeddings(fake);
    fake.pace = () => "burst";
    fake.piecesFor = (body) => (JSON.stringify(body.messages).includes("think long") ? LONG : undefined);
    gw = await startTestGateway(policyConfig(fake.baseUrl)); // no idempotency settings: the defaults
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });
  const calls = () => fake.requests.length;

  it("replays a 150-input embeddings batch of 1536-dim vectors (~4.8 MB)", async () => {
    const body = { model: "openai/text-embedding-3-small", input: Array.from({ length: 150 }, (_, i) => `hello world ${i}`) };
    const headers = auth(undefined, { "idempotency-key": ulid() });
    const first = await postJson(`${gw.baseURL}/embeddings`, body, headers);
    expect(first.status).toBe(200);
    expect(JSON.stringify(first.json).length).toBeGreaterThan(4.5e6);
    const before = calls();
    const again = await postJson(`${gw.baseURL}/embeddings`, body, headers);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(calls()).toBe(before);
  });

  it("replays a ~6 MB stream", async () => {
    const body = JSON.stringify({ ...chat(), max_tokens: 100, stream: true, messages: [{ role: "user", content: "think long" }] });
    const headers = { "content-type": "application/json", ...auth(undefined, { "idempotency-key": ulid() }) };
    const first = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers, body });
    const text = await first.text();
    expect(first.status).toBe(200);
    expect(text.length).toBeGreaterThan(6e6);
    const before = calls();
    const again = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers, body });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(text);
    expect(calls()).toBe(before);
  });
});
