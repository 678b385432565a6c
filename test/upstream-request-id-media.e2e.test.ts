// The provider's own id for the call reaches an embeddings or images client in x-mg-upstream-request-id, as it does
// a chat client (test/upstream-request-id.e2e.test.ts): README promises it on every answer where the provider sent
// one. The fake OpenAI names each call in x-request-id (req_embed_<n>, req_image_<n>), as OpenAI does.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";
import { OPENAI_KEY, startFakeOpenAIMedia, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";

const HEADER = "x-mg-upstream-request-id";
let up: FakeOpenAIMedia;
let gw: TestGateway;

beforeAll(async () => {
  up = await startFakeOpenAIMedia();
  gw = await startTestGateway(mediaConfig({ providers: { openai: { protocol: "openai", base_url: up.baseUrl, api_key: OPENAI_KEY } } }));
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

describe("an OpenAI upstream's x-request-id", () => {
  it("is on an embeddings answer, each request its own call's", async () => {
    const first = await postJson(`${gw.baseURL}/embeddings`, { model: "openai/text-embedding-3-small", input: ["a", "b"] }, auth(LIVE));
    expect(first.status).toBe(200);
    expect(first.headers.get(HEADER)).toMatch(/^req_embed_\d+$/);
    const second = await postJson(`${gw.baseURL}/embeddings`, { model: "openai/text-embedding-3-small", input: "c" }, auth(LIVE));
    expect(second.status).toBe(200);
    expect(second.headers.get(HEADER)).toMatch(/^req_embed_\d+$/);
    expect(second.headers.get(HEADER)).not.toBe(first.headers.get(HEADER));
  });

  it("is on an images answer", async () => {
    const res = await postJson(`${gw.baseURL}/images/generations`, { model: "openai/gpt-image-1", prompt: "a lighthouse" }, auth(LIVE));
    expect(res.status).toBe(200);
    expect(res.headers.get(HEADER)).toMatch(/^req_image_\d+$/);
  });
});
