// The shipped catalog prices images per quality and size (pricing.image_tiers, OpenAI's list prices), and so can an
// operator's own entry (dall-e-3 below, which OpenAI has shut down and the catalog no longer has): a request is
// sent the tier it names, billed that tier's price in the ledger and x-mg-cost-usd, and the budget reserves it; a
// size or quality no tier prices is refused before any upstream call, naming the field.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { validateModelList } from "../core/generated/validators.js";
import { startFakeOpenAIMedia, OPENAI_KEY, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";
import { unretiredEntries } from "./helpers/unretired-catalog.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const LIVE = testKey("imgtier");
const TIGHT = testKey("imgtight");
let up: FakeOpenAIMedia;
let gw: TestGateway;

beforeAll(async () => {
  up = await startFakeOpenAIMedia();
  const base = YAML.parse(readFileSync(join(root, "gateway.yaml"), "utf8"));
  gw = await startTestGateway({
    include: [join(root, "catalog", "models.yaml")],
    providers: { ...base.providers, openai: { ...base.providers.openai, base_url: up.baseUrl, api_key: OPENAI_KEY } },
    models: {
      // The catalog's gpt-image-1 (tiered at OpenAI's list prices) is marked retired since OpenAI shut it down on
      // 2026-10-23; re-declared as an operator's own entry (a deployment that still serves it), served by the fake.
      ...unretiredEntries([join(root, "catalog", "models.yaml")]),
      // An operator's own entry at dall-e-3's former list prices, served here by the fake.
      "openai/dall-e-3": {
        name: "DALL·E 3", description: "Image generation from text prompts.", type: "image", owned_by: "openai", released: 1699228800, created: 1699228800,
        context_window: 4000, tags: [], limits: { max_images: 1, sizes: ["1024x1024", "1792x1024", "1024x1792"], qualities: ["standard", "hd"] },
        endpoints: [{ provider: "openai", model: "dall-e-3", pricing: { image: "0.04", image_tiers: {
          standard: { "1024x1024": "0.04", "1792x1024": "0.08", "1024x1792": "0.08" }, hd: { "1024x1024": "0.08", "1792x1024": "0.12", "1024x1792": "0.12" } } } }],
      },
      // hd is priced at 1024x1024 only: hd at 1792x1024 is a combination no tier prices.
      "acme/partial": {
        name: "Partial", description: "tiers for some combinations", type: "image", owned_by: "acme", released: 1, created: 1,
        context_window: 4000, tags: [], limits: { max_images: 1, sizes: ["1024x1024", "1792x1024"], qualities: ["standard", "hd"] },
        endpoints: [{ provider: "openai", model: "dall-e-3", pricing: { image: "0.04", image_tiers: { standard: { "1024x1024": "0.04", "1792x1024": "0.08" }, hd: { "1024x1024": "0.08" } } } }],
      },
    },
    projects: {
      p: { keys: [keyEntry("k", LIVE)] },
      // Just under dall-e-3's hd 1792x1024 price ($0.12).
      tight: { budget: { usd: "0.119", period: "month" }, keys: [keyEntry("t", TIGHT)] },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});
beforeEach(() => {
  up.requests.length = 0;
});

const post = (body: Record<string, unknown>, key = LIVE) =>
  postJson(`${gw.baseURL}/images/generations`, { prompt: "a lighthouse", ...body }, { authorization: `Bearer ${key}` });
const costOf = async (r: { headers: Headers }) => Number((await gw.gateway.store.ledger({})).find((e) => e.requestId === r.headers.get("x-request-id"))!.costUsd);

describe("image price tiers", () => {
  it("dall-e-3 hd 1792x1024 is served and billed $0.12 in the ledger and x-mg-cost-usd", async () => {
    const r = await post({ model: "openai/dall-e-3", quality: "hd", size: "1792x1024" });
    expect(r.status).toBe(200);
    expect(up.requests[0]!.body).toMatchObject({ model: "dall-e-3", size: "1792x1024", quality: "hd" });
    expect(r.headers.get("x-mg-cost-usd")).toBe("0.12");
    expect(await costOf(r)).toBe(0.12);
  });

  it("gpt-image-1 high 1536x1024 n=2 is billed 2 x $0.25 plus its text input", async () => {
    const r = await post({ model: "openai/gpt-image-1", quality: "high", size: "1536x1024", n: 2 });
    expect(r.status).toBe(200);
    expect(up.requests[0]!.body).toMatchObject({ model: "gpt-image-1", n: 2, size: "1536x1024", quality: "high" });
    const expected = 0.5 + r.json.usage.input_tokens * 0.000005;
    expect(Number(r.headers.get("x-mg-cost-usd"))).toBeCloseTo(expected, 12);
    expect(await costOf(r)).toBeCloseTo(expected, 12);
  });

  it("a request naming no size or quality is sent the default tier and billed its price", async () => {
    const g = await post({ model: "openai/gpt-image-1", n: 8 });
    expect(g.status).toBe(200);
    expect(up.requests[0]!.body).toMatchObject({ model: "gpt-image-1", n: 8, size: "1024x1024", quality: "medium" });
    expect(await costOf(g)).toBeCloseTo(8 * 0.042 + g.json.usage.input_tokens * 0.000005, 12);
    const d = await post({ model: "openai/dall-e-3" });
    expect(up.requests[1]!.body).toMatchObject({ model: "dall-e-3", size: "1024x1024", quality: "standard" });
    expect(d.headers.get("x-mg-cost-usd")).toBe("0.04");
  });

  it("a budget just under a tier's price refuses that tier with 402 while a cheaper tier passes", async () => {
    const dear = await post({ model: "openai/dall-e-3", quality: "hd", size: "1792x1024" }, TIGHT);
    expect(dear.status).toBe(402);
    expect(up.requests).toHaveLength(0);
    const cheaper = await post({ model: "openai/dall-e-3", quality: "standard", size: "1792x1024" }, TIGHT);
    expect(cheaper.status).toBe(200);
    expect(cheaper.headers.get("x-mg-cost-usd")).toBe("0.08");
  });

  it("a size or quality no tier prices is still 400 BAD_REQUEST naming the field, before any upstream call", async () => {
    const cases: [Record<string, unknown>, string, string[]][] = [
      [{ model: "openai/dall-e-3", quality: "low" }, "quality", ["standard", "hd"]],
      [{ model: "openai/dall-e-3", quality: "hd", size: "1536x1024" }, "size", ["1024x1024", "1792x1024", "1024x1792"]],
      [{ model: "openai/gpt-image-1", quality: "high", size: "1792x1024" }, "size", ["1024x1024", "1536x1024", "1024x1536"]],
      [{ model: "openai/gpt-image-1", quality: "ultra" }, "quality", ["medium", "low", "high"]],
      // each quality is listed, each size too, but no tier prices hd at 1792x1024
      [{ model: "acme/partial", quality: "hd", size: "1792x1024" }, "size", ["1024x1024"]],
      // a fallback model is held to its own tiers too
      [{ model: "google/imagen-4", quality: "ultra", providerOptions: { gateway: { models: ["openai/gpt-image-1"] } } }, "quality", ["medium", "low", "high"]],
    ];
    for (const [body, field, supported] of cases) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error, JSON.stringify(body)).toMatchObject({ code: "BAD_REQUEST", details: { field, supported } });
    }
    expect(up.requests).toHaveLength(0);
  });

  it("a fallback chain between models with different tiers serves in either order, each model sent and billed its own default", async () => {
    const fallback = (first: string, then: string) => post({ model: first, providerOptions: { gateway: { models: [then] } } });
    const d = await fallback("openai/dall-e-3", "openai/gpt-image-1");
    expect(d.status).toBe(200);
    expect(up.requests[0]!.body).toMatchObject({ model: "dall-e-3", size: "1024x1024", quality: "standard" });
    expect(d.headers.get("x-mg-cost-usd")).toBe("0.04");
    expect(await costOf(d)).toBe(0.04);
    const g = await fallback("openai/gpt-image-1", "openai/dall-e-3");
    expect(g.status).toBe(200);
    expect(up.requests[1]!.body).toMatchObject({ model: "gpt-image-1", size: "1024x1024", quality: "medium" });
    expect(await costOf(g)).toBeCloseTo(0.042 + g.json.usage.input_tokens * 0.000005, 12);
  });

  it("when the first model fails and the fallback serves, the fallback is sent and billed its own tier", async () => {
    up.failures.push({ status: 500, body: { error: { message: "The server had an error", type: "server_error", param: null, code: null } } });
    const r = await post({ model: "openai/dall-e-3", providerOptions: { gateway: { models: ["openai/gpt-image-1"] } } });
    expect(r.status).toBe(200);
    expect(r.json.model).toBe("openai/gpt-image-1");
    expect(up.requests.map((q) => q.body)).toMatchObject([
      { model: "dall-e-3", size: "1024x1024", quality: "standard" },
      { model: "gpt-image-1", size: "1024x1024", quality: "medium" },
    ]);
    const expected = 0.042 + r.json.usage.input_tokens * 0.000005;
    expect(Number(r.headers.get("x-mg-cost-usd"))).toBeCloseTo(expected, 12);
    expect(await costOf(r)).toBeCloseTo(expected, 12);
  });

  it("a quality only one model of the chain offers is served by that model, the other left out, wherever it stands", async () => {
    const hd = await post({ model: "openai/gpt-image-1", quality: "hd", size: "1792x1024", providerOptions: { gateway: { models: ["openai/dall-e-3"] } } });
    expect(hd.status).toBe(200);
    expect(hd.json.model).toBe("openai/dall-e-3");
    expect(hd.headers.get("x-mg-cost-usd")).toBe("0.12");
    expect(await costOf(hd)).toBe(0.12);
    const high = await post({ model: "openai/dall-e-3", quality: "high", providerOptions: { gateway: { models: ["openai/gpt-image-1"] } } });
    expect(high.status).toBe(200);
    expect(high.json.model).toBe("openai/gpt-image-1");
    expect(await costOf(high)).toBeCloseTo(0.167 + high.json.usage.input_tokens * 0.000005, 12);
    // the model that does not offer it is never called
    expect(up.requests.map((q) => [q.body.model, q.body.quality])).toEqual([["dall-e-3", "hd"], ["gpt-image-1", "high"]]);
    // a quality no model of the chain offers is still 400 naming it (the requested model's)
    const none = await post({ model: "openai/dall-e-3", quality: "ultra", providerOptions: { gateway: { models: ["openai/gpt-image-1"] } } });
    expect(none.status).toBe(400);
    expect(none.json.error).toMatchObject({ code: "BAD_REQUEST", details: { field: "quality", supported: ["standard", "hd"], model: "openai/dall-e-3" } });
    expect(up.requests).toHaveLength(2);
  });

  it("the model listing shows the tiers beside the default image price", async () => {
    const list = await (await fetch(`${gw.baseURL}/models`, { headers: { authorization: `Bearer ${LIVE}` } })).json();
    expect(validateModelList(list)).toBe(true);
    const dalle = list.data.find((m: any) => m.id === "openai/dall-e-3");
    expect(dalle.pricing).toMatchObject({ image: "0.04", image_tiers: { hd: { "1792x1024": "0.12" }, standard: { "1024x1792": "0.08" } } });
  });
});
