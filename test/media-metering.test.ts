// Metering and idempotent replay on the media endpoints: embeddings are billed per input token, rerank once per
// query, images and videos once per asset — a replay (x-mg-idempotency-key) or a video re-attach bills nothing; a
// video job bills the request that started it, when the job ends.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ulid } from "ulid";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";
import { startFakeOpenAIMedia, OPENAI_KEY, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";

let up: FakeOpenAIMedia;
let gw: TestGateway;
beforeAll(async () => {
  up = await startFakeOpenAIMedia();
  gw = await startTestGateway(mediaConfig({ providers: { openai: { protocol: "openai", base_url: up.baseUrl, api_key: OPENAI_KEY } } }));
});
afterAll(async () => {
  await gw.close();
  await up.close();
});
beforeEach(() => {
  up.requests.length = 0;
});

const ledgerFor = async (requestId: string | null) => (await gw.gateway.store.ledger({})).filter((e) => e.requestId === requestId);
const post = (path: string, body: unknown, headers: Record<string, string> = {}) => postJson(`${gw.baseURL}${path}`, body, { ...auth(LIVE), ...headers });

describe("media metering", () => {
  it("embeddings: billed per input token at the catalog's input price", async () => {
    const r = await post("/embeddings", { model: "openai/text-embedding-3-small", input: ["alpha beta", "gamma"] });
    const [e] = await ledgerFor(r.headers.get("x-request-id"));
    expect(e).toMatchObject({ endpoint: "embeddings", inputTokens: r.json.usage.prompt_tokens, outputTokens: 0, outcome: "ok" });
    expect(Number(e!.costUsd)).toBeCloseTo(r.json.usage.prompt_tokens * 0.00000002, 12);
  });

  it("rerank: one search unit per query whatever the document count; a replay is free", async () => {
    const k = ulid();
    const body = { model: "sim/ranker", query: "capital of france", documents: Array.from({ length: 50 }, (_, i) => `doc ${i}`) };
    const r = await post("/rerank", body, { "x-mg-idempotency-key": k });
    const [e] = await ledgerFor(r.headers.get("x-request-id"));
    expect(e).toMatchObject({ endpoint: "rerank", searchUnits: 1 });
    expect(Number(e!.costUsd)).toBeCloseTo(0.002, 9);
    const again = await post("/rerank", body, { "x-mg-idempotency-key": k });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json.id).toBe(r.json.id);
    expect(await ledgerFor(again.headers.get("x-request-id"))).toHaveLength(0);
  });

  it("images: billed per image (plus prompt tokens); a replay returns the same images without a second upstream call", async () => {
    const k = ulid();
    const body = { model: "openai/gpt-image-1", prompt: "a blue bird", n: 2 };
    const r = await post("/images/generations", body, { "x-mg-idempotency-key": k });
    const [e] = await ledgerFor(r.headers.get("x-request-id"));
    expect(e).toMatchObject({ endpoint: "images", images: 2, inputTokens: r.json.usage.input_tokens });
    expect(Number(e!.costUsd)).toBeCloseTo(2 * 0.04 + r.json.usage.input_tokens * 0.000005, 9); // output image tokens have no price here
    const again = await post("/images/generations", body, { "x-mg-idempotency-key": k });
    expect(again.json.data).toEqual(r.json.data);
    expect(up.requests.filter((q) => q.path === "/v1/images/generations")).toHaveLength(1);
    expect(await ledgerFor(again.headers.get("x-request-id"))).toHaveLength(0);
  });

  it("videos: billed once per asset, by the request that started the job; re-attaching is free", async () => {
    const k = ulid();
    const body = { model: "sim/reel", prompt: "billing check", duration: 3 };
    const r = await post("/videos", body, { "x-mg-idempotency-key": k });
    expect(r.status).toBe(200);
    const [e] = await ledgerFor(r.headers.get("x-request-id"));
    expect(e).toMatchObject({ endpoint: "videos", videoSeconds: 4 });
    expect(Number(e!.costUsd)).toBeCloseTo(0.4, 9);
    expect(r.headers.get("x-mg-cost-usd")).toBe(e!.costUsd);
    const again = await post("/videos", body, { "x-mg-idempotency-key": k });
    expect(again.json.id).toBe(r.json.id);
    expect(again.headers.get("x-mg-generation-id")).toBe(e!.generationId);
    expect(await ledgerFor(again.headers.get("x-request-id"))).toHaveLength(0);
  });

  it("videos: a client that left is billed when its job ends; the repeat that collects the asset is not", async () => {
    const k = ulid();
    const body = { model: "sim/reel", prompt: "left early", duration: 2 };
    const controller = new AbortController();
    const first = fetch(`${gw.baseURL}/videos`, {
      method: "POST", signal: controller.signal, body: JSON.stringify(body),
      headers: { "content-type": "application/json", ...auth(LIVE), "x-mg-idempotency-key": k },
    }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    await first;
    const again = await post("/videos", body, { "x-mg-idempotency-key": k });
    expect(again.status).toBe(200);
    expect(await ledgerFor(again.headers.get("x-request-id"))).toHaveLength(0);
    // the only 2-second video of this file: billed exactly once, by the record the repeat names
    const billed = (await gw.gateway.store.ledger({})).filter((x) => x.endpoint === "videos" && x.videoSeconds === 2);
    expect(billed).toHaveLength(1);
    expect(billed[0]!.generationId).toBe(again.headers.get("x-mg-generation-id"));
  });
});
