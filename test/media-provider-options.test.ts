// Security issue 25, item 8: provider options that change what the provider bills (Veo sample count, length and
// resolution, Imagen's sample count, Sora sizes) are refused with a 400 naming the field before any upstream call,
// and a video is reserved for the seconds it will really be generated for (the duration clamped to the model's).
// Fakes of the Gemini API and OpenAI's video API, a SQLite store, a budgeted project.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { auth, mediaConfig } from "./helpers/media.ts";
import { GEMINI_KEY, startFakeGeminiMedia, type FakeGeminiMedia } from "./upstreams/gemini-media.ts";
import { OPENAI_KEY, startFakeOpenAIMedia, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";

const PAYER = testKey("media-knobs");
/** $2.39 a month: a 4 s Veo clip ($1.60) fits, a 6 s one ($2.40) does not. */
const TIGHT = testKey("media-tight");
let google: FakeGeminiMedia;
let openai: FakeOpenAIMedia;
let gw: TestGateway;

beforeAll(async () => {
  google = await startFakeGeminiMedia();
  openai = await startFakeOpenAIMedia();
  const config: any = mediaConfig({
    providers: {
      gemini: { protocol: "gemini", base_url: google.baseUrl, api_key: GEMINI_KEY },
      openai: { protocol: "openai", base_url: openai.baseUrl, api_key: OPENAI_KEY },
    },
    models: {
      "google/imagen-4": { type: "image", limits: { max_images: 4 }, endpoints: [{ provider: "gemini", model: "imagen-4.0-generate-001", pricing: { image: "0.04" } }] },
      "google/veo-3": { type: "video", limits: { durations: [4, 6, 8], aspect_ratios: ["16:9", "9:16"], max_concurrent_jobs: 4, poll_initial_ms: 5, poll_max_ms: 20 }, endpoints: [{ provider: "gemini", model: "veo-3.0-generate-001", pricing: { video_second: "0.4" } }] },
      "openai/sora-2": { type: "video", limits: { durations: [4, 8, 12], sizes: ["1280x720", "720x1280"], poll_initial_ms: 5, poll_max_ms: 20 }, endpoints: [{ provider: "openai", model: "sora-2", pricing: { video_second: "0.1" } }] },
    },
  });
  config.store = { kind: "sqlite", path: "./gateway.db" };
  config.projects.payer = { keys: [keyEntry("payer", PAYER)], budget: { usd: "1000", period: "month" } };
  config.projects.tight = { keys: [keyEntry("tight", TIGHT)], budget: { usd: "2.39", period: "month" } };
  gw = await startTestGateway(config);
});
afterAll(async () => {
  await gw?.close();
  await google?.close();
  await openai?.close();
});
beforeEach(() => {
  google.requests.length = 0;
  openai.requests.length = 0;
});

const post = (path: string, body: unknown, key = PAYER) => postJson(`${gw.baseURL}${path}`, body, auth(key));
const spent = async (requestId: string | null) => (await gw.gateway.store.ledger({})).filter((e) => e.requestId === requestId);

describe("Veo: options that change the bill", () => {
  it("a 4 s request asking Veo for four 8 s samples is refused (it was billed as 4 s of a 32 s job); nothing starts", async () => {
    const before = google.operationsStarted;
    const r = await post("/videos", { model: "google/veo-3", prompt: "clouds", duration: 4, providerOptions: { gemini: { sampleCount: 4, durationSeconds: 8 } } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: "BAD_REQUEST", details: { field: "providerOptions.gemini.sampleCount" } });
    expect(r.json.error.message).toContain("providerOptions.gemini.sampleCount");
    expect(google.operationsStarted).toBe(before);
    expect((await spent(r.headers.get("x-request-id"))).reduce((n, e) => n + Number(e.costUsd), 0)).toBe(0);
  });

  it("durationSeconds other than the request's duration, and an unpriced resolution, are refused by name", async () => {
    const longer = await post("/videos", { model: "google/veo-3", prompt: "clouds", duration: 4, providerOptions: { gemini: { durationSeconds: 8 } } });
    expect(longer.status).toBe(400);
    expect(longer.json.error.details.field).toBe("providerOptions.gemini.durationSeconds");
    const sharper = await post("/videos", { model: "google/veo-3", prompt: "clouds", duration: 4, providerOptions: { gemini: { resolution: "4k" } } });
    expect(sharper.status).toBe(400);
    expect(sharper.json.error.details.field).toBe("providerOptions.gemini.resolution");
    expect(google.requests.filter((q) => q.path.endsWith(":predictLongRunning"))).toHaveLength(0);
  });

  it("options that match what is priced pass through and are billed by the seconds generated", async () => {
    const r = await post("/videos", { model: "google/veo-3", prompt: "clouds", duration: 5, providerOptions: { gemini: { sampleCount: 1, durationSeconds: 6, resolution: "1080p", seed: 7 } } });
    expect(r.status).toBe(200);
    expect(google.requests.find((q) => q.path.endsWith(":predictLongRunning"))!.body.parameters).toMatchObject({ sampleCount: 1, durationSeconds: 6, resolution: "1080p", seed: 7 });
    const [e] = await spent(r.headers.get("x-request-id"));
    expect(e).toMatchObject({ videoSeconds: 6, costUsd: "2.4" });
  });

  it("the budget reserves the seconds the model will generate: 5 s asked is 6 s made on a 4/6/8 s model", async () => {
    const r = await post("/videos", { model: "google/veo-3", prompt: "clouds", duration: 5 }, TIGHT);
    expect(r.status).toBe(402);
    expect(r.json.error.details.request_max_usd).toBe("2.4");
    expect(google.requests.filter((q) => q.path.endsWith(":predictLongRunning"))).toHaveLength(0);
    const fits = await post("/videos", { model: "google/veo-3", prompt: "clouds", duration: 4 }, TIGHT);
    expect(fits.status).toBe(200);
  });
});

describe("Imagen and Sora: sample counts and sizes outside the price", () => {
  it("Imagen: a sample count of its own beside n is refused (n images are reserved and billed)", async () => {
    const r = await post("/images/generations", { model: "google/imagen-4", prompt: "a koi pond", n: 1, providerOptions: { gemini: { sampleCount: 4 } } });
    expect(r.status).toBe(400);
    expect(r.json.error.details.field).toBe("providerOptions.gemini.sampleCount");
    expect(google.requests).toHaveLength(0);
    const same = await post("/images/generations", { model: "google/imagen-4", prompt: "a koi pond", n: 2, providerOptions: { gemini: { sampleCount: 2 } } });
    expect(same.status).toBe(200);
    expect(same.json.data).toHaveLength(2);
  });

  it("Sora: a size with no catalog price, in providerOptions or as a passed-through field, is refused", async () => {
    const knob = await post("/videos", { model: "openai/sora-2", prompt: "waves", duration: 4, providerOptions: { openai: { size: "1792x1024" } } });
    expect(knob.status).toBe(400);
    expect(knob.json.error.details.field).toBe("providerOptions.openai.size");
    const extra = await post("/videos", { model: "openai/sora-2", prompt: "waves", duration: 4, size: "1024x1792" });
    expect(extra.status).toBe(400);
    expect(extra.json.error.details.field).toBe("size");
    expect(openai.requests.filter((q) => q.path === "/v1/videos")).toHaveLength(0);
    const ok = await post("/videos", { model: "openai/sora-2", prompt: "waves", duration: 4, providerOptions: { openai: { size: "720x1280" } } });
    expect(ok.status).toBe(200);
    expect(ok.json.data[0]).toMatchObject({ duration: 4, size: "720x1280" });
  });
});
