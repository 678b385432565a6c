// Embeddings, images and videos on the Gemini API protocol (fake upstream): batchEmbedContents split at 100,
// Imagen predict with revised prompts and safety filtering, Veo long-running operations with polling.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, cosine, LIVE, mediaConfig, norm } from "./helpers/media.ts";
import { GEMINI_KEY, startFakeGeminiMedia, type FakeGeminiMedia } from "./upstreams/gemini-media.ts";
import { fakeVector } from "./upstreams/http-fake.ts";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

let up: FakeGeminiMedia;
let gw: TestGateway;
let client: OpenAI;
/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  up = await startFakeGeminiMedia();
  gw = await startTestGateway(mediaConfig({
    providers: { gemini: { protocol: "gemini", base_url: up.baseUrl, api_key: GEMINI_KEY } },
    models: {
      "google/gemini-embedding-001": { type: "embedding", context_window: 2048, dimensions: 3072, limits: { dimensions: "native", min_dimensions: 128 }, endpoints: [{ provider: "gemini", model: "gemini-embedding-001" }] },
      "google/imagen-4": { type: "image", limits: { max_images: 4 }, endpoints: [{ provider: "gemini", model: "imagen-4.0-generate-001", pricing: { image: "0.04" } }] },
      "google/veo-3": { type: "video", limits: { durations: [4, 6, 8], aspect_ratios: ["16:9", "9:16"], poll_initial_ms: 5, poll_max_ms: 20 }, endpoints: [{ provider: "gemini", model: "veo-3.0-generate-001", pricing: { video_second: "0.4" } }] },
    },
  }));
  client = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
});
afterAll(async () => {
  await gw.close();
  await up.close();
});
beforeEach(() => {
  up.requests.length = 0;
  up.failures.length = 0;
  up.veoError = undefined;
});

describe("Gemini embeddings", () => {
  it("batchEmbedContents in batches of 100, outputDimensionality, taskType; in order", async () => {
    const input = Array.from({ length: 250 }, (_, i) => `passage ${i}`);
    const res = await client.embeddings.create({ model: "google/gemini-embedding-001", input, dimensions: 768, providerOptions: { gemini: { taskType: "RETRIEVAL_DOCUMENT" } } } as any);
    expect(up.requests.map((r) => r.body.requests.length)).toEqual([100, 100, 50]);
    expect(up.requests[0]!.path).toBe("/v1beta/models/gemini-embedding-001:batchEmbedContents");
    expect(up.requests[0]!.body.requests[0]).toEqual({ model: "models/gemini-embedding-001", content: { parts: [{ text: "passage 0" }] }, taskType: "RETRIEVAL_DOCUMENT", outputDimensionality: 768 });
    expect(res.data).toHaveLength(250);
    expect(res.data[249]!.embedding).toHaveLength(768);
    expect(cosine(res.data[123]!.embedding, fakeVector("passage 123", 768, "gemini-embedding-001"))).toBeCloseTo(1, 5);
    expect(norm(res.data[0]!.embedding)).toBeCloseTo(1, 5);
    expect(res.usage.prompt_tokens).toBeGreaterThan(0); // estimated: Gemini reports none
  });

  it("Gemini errors keep their message; a 400 from Google is the caller's 400 INVALID_REQUEST", async () => {
    up.failures.push({ status: 400, body: { error: { code: 400, message: "Request contains an invalid argument.", status: "INVALID_ARGUMENT" } } });
    const r = await postJson(`${gw.baseURL}/embeddings`, { model: "google/gemini-embedding-001", input: "x" }, auth(LIVE));
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe("INVALID_REQUEST");
    expect(r.json.error.details.upstream_error.status).toBe("INVALID_ARGUMENT");
    expect(r.json.error.message).toContain("invalid argument");
  });
});

describe("Imagen", () => {
  it("predict with sampleCount and the nearest aspect ratio; b64 back", async () => {
    const res = await client.images.generate({ model: "google/imagen-4", prompt: "a koi pond", n: 3, size: "1792x1024" });
    expect(up.requests[0]!.path).toBe("/v1beta/models/imagen-4.0-generate-001:predict");
    expect(up.requests[0]!.body).toEqual({ instances: [{ prompt: "a koi pond" }], parameters: { sampleCount: 3, aspectRatio: "16:9", imageSize: "2K" } });
    expect(res.data).toHaveLength(3);
    expect((res as any).usage.output_images).toBe(3);
    expect(res.data![0]!.revised_prompt).toBeUndefined();
  });

  it("revised_prompt appears only when Imagen rewrote the prompt (enhancePrompt)", async () => {
    const r = await postJson(`${gw.baseURL}/images/generations`, { model: "google/imagen-4", prompt: "a koi pond", providerOptions: { gemini: { enhancePrompt: true } } }, auth(LIVE));
    expect(r.json.data[0].revised_prompt).toBe("a koi pond, cinematic lighting, highly detailed");
  });

  it("a prompt withheld by the safety filter is 502 UPSTREAM_ERROR naming the reason; n > 4 is refused first", async () => {
    const r = await postJson(`${gw.baseURL}/images/generations`, { model: "google/imagen-4", prompt: "something forbidden" }, auth(LIVE));
    expect(r.status).toBe(502);
    expect(r.json.error.message).toContain("violate our policies");
    up.requests.length = 0;
    const n = await postJson(`${gw.baseURL}/images/generations`, { model: "google/imagen-4", prompt: "x", n: 5 }, auth(LIVE));
    expect(n.status).toBe(400);
    expect(up.requests).toHaveLength(0);
  });
});

describe("Veo", () => {
  it("predictLongRunning, polls the operation until done, downloads the sample with the key", async () => {
    const r = await postJson(`${gw.baseURL}/videos`, { model: "google/veo-3", prompt: "a timelapse of clouds", duration: 5, aspect_ratio: "9:16" }, auth(LIVE));
    expect(r.status).toBe(200);
    const start = up.requests[0]!;
    expect(start.path).toBe("/v1beta/models/veo-3.0-generate-001:predictLongRunning");
    expect(start.body).toEqual({ instances: [{ prompt: "a timelapse of clouds" }], parameters: { sampleCount: 1, aspectRatio: "9:16", durationSeconds: 6 } });
    expect(up.requests.filter((q) => q.path.includes("/operations/")).length).toBe(2);
    const dl = up.requests.find((q) => q.path.startsWith("/v1beta/files/"))!;
    expect(dl.headers["x-goog-api-key"]).toBe(GEMINI_KEY);
    const stored = up.requests.find((q) => q.path.startsWith("/storage/"))!; // followed the redirect
    expect(stored).toBeDefined();
    expect(r.json.data[0]).toMatchObject({ duration: 6, size: "720x1280" });
    expect(r.json.usage.output_seconds).toBe(6);
    expect(r.text).not.toContain(up.origin);
    const file = await fetch(r.json.data[0].url);
    expect(file.headers.get("content-type")).toBe("video/mp4");
  });

  it("a failed operation is 502 UPSTREAM_ERROR with Google's message", async () => {
    up.veoError = { code: 3, message: "The prompt could not be submitted: it violates the usage guidelines.", status: "INVALID_ARGUMENT" };
    const r = await postJson(`${gw.baseURL}/videos`, { model: "google/veo-3", prompt: "x" }, auth(LIVE));
    expect(r.status).toBe(502);
    expect(r.json.error.message).toContain("usage guidelines");
  });
});
