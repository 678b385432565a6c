// The catalog endpoints against the spec's shapes, and live stats that move when traffic flows.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, testKey, keyEntry, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { validateModel, validateModelEndpoints, validateModelList } from "../core/generated/validators.js";

const KEY = testKey("catalog");
const SANDBOX = testKey("catalog", true);

let alpha: FakeOpenAI;
let gw: TestGateway;

const get = async (path: string, key = KEY) => {
  const res = await fetch(`${gw.baseURL}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, json: await res.json() as any };
};

beforeAll(async () => {
  alpha = await startFakeOpenAI({ chunkDelayMs: 3 });
  gw = await startTestGateway({
    providers: {
      alpha: { protocol: "openai", base_url: alpha.baseUrl, api_key: "sk-fake-upstream" },
      beta: { protocol: "openai", base_url: alpha.baseUrl, api_key: "${UNSET_BETA_KEY}" },
    },
    models: {
      "acme/chat-1": {
        name: "Acme Chat 1", description: "A test model", owned_by: "acme", released: 1735689600, created: 1735689600,
        context_window: 128000, max_tokens: 8192, tags: ["tool-use", "vision"], price_source: "test fixture, 2026-01-01",
        endpoints: [
          { provider: "alpha", model: "chat-1", pricing: { input: "0.0000025", output: "0.00001", input_cache_read: "0.00000125" } },
          { provider: "beta", model: "chat-1b", context_window: 64000, pricing: { input: "0.000002", output: "0.000008" } },
        ],
      },
      "acme/embed-1": { type: "embedding", context_window: 8192, dimensions: 1536, endpoints: [{ provider: "alpha", model: "embed-1", pricing: { input: "0.00000002" } }] },
      "acme/image-1": { type: "image", endpoints: [{ provider: "alpha", model: "image-1", pricing: { image: "0.04" } }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY), keyEntry("s", SANDBOX)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await alpha?.close();
});

describe("GET /v1/models", () => {
  it("needs a key like every endpoint", async () => {
    const r = await get("/models", "");
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe("INVALID_API_KEY");
  });

  it("lists every model in the spec's shape, prices as decimal strings per token", async () => {
    const r = await get("/models");
    expect(r.status).toBe(200);
    expect(validateModelList(r.json), JSON.stringify(validateModelList.errors)).toBe(true);
    expect(r.json.data.map((m: any) => m.id)).toEqual(["acme/chat-1", "acme/embed-1", "acme/image-1"]);
    expect(r.json.data[0]).toEqual({
      id: "acme/chat-1", object: "model", created: 1735689600, released: 1735689600, owned_by: "acme", name: "Acme Chat 1",
      description: "A test model", context_window: 128000, max_tokens: 8192, type: "language", tags: ["tool-use", "vision"],
      pricing: { input: "0.0000025", output: "0.00001", input_cache_read: "0.00000125", input_cache_write: "0.0000025" },
    });
    expect(r.json.data[1].type).toBe("embedding");
    expect(r.json.data[2].pricing.image).toBe("0.04");
  });
});

describe("GET /v1/models/{creator}/{model}", () => {
  it("returns one model with further metadata", async () => {
    const r = await get("/models/acme/chat-1");
    expect(r.status).toBe(200);
    expect(validateModel(r.json), JSON.stringify(validateModel.errors)).toBe(true);
    expect(r.json).toMatchObject({ id: "acme/chat-1", price_source: "test fixture, 2026-01-01", providers: ["alpha"], architecture: { modality: "text+image->text" } });
    expect((await get("/models/acme/embed-1")).json.dimensions).toBe(1536);
  });

  it("404 MODEL_NOT_FOUND for an unknown id", async () => {
    const r = await get("/models/acme/nope");
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe("MODEL_NOT_FOUND");
    expect((await get("/models/acme/nope/endpoints")).status).toBe(404);
  });
});

describe("GET /v1/models/{creator}/{model}/endpoints", () => {
  it("per-provider details in the spec's shape; null stats before any traffic", async () => {
    const r = await get("/models/acme/chat-1/endpoints");
    expect(r.status).toBe(200);
    expect(validateModelEndpoints(r.json), JSON.stringify(validateModelEndpoints.errors)).toBe(true);
    expect(r.json.data).toMatchObject({ id: "acme/chat-1", name: "Acme Chat 1", architecture: { input_modalities: ["text", "image"], output_modalities: ["text"] } });
    // beta has no key: requests cannot use it, so it is not offered
    expect(r.json.data.endpoints).toHaveLength(1);
    const ep = r.json.data.endpoints[0];
    expect(ep).toMatchObject({
      provider_name: "alpha", context_length: 128000, max_completion_tokens: 8192,
      pricing: { prompt: "0.0000025", completion: "0.00001", input_cache_read: "0.00000125", input_cache_write: "0.0000025" },
      throughput_last_1h: null, latency_last_1h: null, uptime_last_1d: null,
    });
    expect(ep.supported_parameters).toEqual(expect.arrayContaining(["max_tokens", "temperature", "tools", "tool_choice", "stream"]));
  });

  it("stats move when traffic flows: latency, throughput and uptime from the gateway's own attempts", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${gw.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
        body: JSON.stringify({ model: "acme/chat-1", stream: true, messages: [{ role: "user", content: "hi" }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
    }
    let ep = (await get("/models/acme/chat-1/endpoints")).json.data.endpoints[0];
    expect(ep.latency_last_1h.p50).toBeGreaterThan(0);
    expect(ep.latency_last_1h.p95).toBeGreaterThanOrEqual(ep.latency_last_1h.p50);
    expect(ep.throughput_last_1h.p50).toBeGreaterThan(0);
    expect(ep.uptime_last_1d).toBe(1);

    alpha.failures.push({ kind: "status", status: 500 }, { kind: "status", status: 500 });
    const failed = await fetch(`${gw.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ model: "acme/chat-1", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(failed.status).toBe(502);
    ep = (await get("/models/acme/chat-1/endpoints")).json.data.endpoints[0];
    expect(ep.uptime_last_1d).toBe(0.6); // 3 good streams, 2 failed attempts
  });

  it("a sandbox key is served by the simulator, and the catalog says so", async () => {
    const r = await get("/models/acme/chat-1/endpoints", SANDBOX);
    expect(r.json.data.endpoints.map((e: any) => e.provider_name)).toEqual(["sim"]);
    expect(validateModelEndpoints(r.json)).toBe(true);
  });

  it("media models describe their own parameters and units", async () => {
    const r = await get("/models/acme/image-1/endpoints");
    expect(validateModelEndpoints(r.json)).toBe(true);
    expect(r.json.data.architecture.output_modalities).toEqual(["image"]);
    expect(r.json.data.endpoints[0].pricing.image).toBe("0.04");
    expect(r.json.data.endpoints[0].supported_parameters).toContain("size");
  });
});
