// The shipped catalog prices one tier per image (dall-e-3 standard 1024x1024, gpt-image-1 medium 1024x1024): a size
// or quality the provider bills higher is refused before any upstream call, naming the field, and a request that
// names none is sent the priced tier, so what the gateway bills is what the provider charges.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAIMedia, OPENAI_KEY, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const LIVE = testKey("imgtier");
let up: FakeOpenAIMedia;
let gw: TestGateway;

beforeAll(async () => {
  up = await startFakeOpenAIMedia();
  const base = YAML.parse(readFileSync(join(root, "gateway.yaml"), "utf8"));
  gw = await startTestGateway({
    include: [join(root, "catalog", "models.yaml")],
    providers: { ...base.providers, openai: { ...base.providers.openai, base_url: up.baseUrl, api_key: OPENAI_KEY } },
    projects: { p: { keys: [keyEntry("k", LIVE)] } },
  });
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});
beforeEach(() => {
  up.requests.length = 0;
});

const post = (body: Record<string, unknown>) => postJson(`${gw.baseURL}/images/generations`, { prompt: "a lighthouse", ...body }, { authorization: `Bearer ${LIVE}` });
const costOf = async (r: { headers: Headers }) => Number((await gw.gateway.store.ledger({})).find((e) => e.requestId === r.headers.get("x-request-id"))!.costUsd);

describe("image sizes and qualities the catalog does not price", () => {
  it("are 400 BAD_REQUEST naming the field, before any upstream call", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ model: "openai/dall-e-3", quality: "hd", size: "1024x1024" }, "quality"],
      [{ model: "openai/dall-e-3", quality: "hd", size: "1792x1024" }, "size"],
      [{ model: "openai/dall-e-3", size: "1024x1792" }, "size"],
      [{ model: "openai/gpt-image-1", quality: "high", size: "1536x1024", n: 8 }, "size"],
      [{ model: "openai/gpt-image-1", quality: "high" }, "quality"],
      [{ model: "openai/gpt-image-1", quality: "auto" }, "quality"],
      [{ model: "openai/gpt-image-1", quality: "low" }, "quality"],
      // a fallback model is held to its own price too
      [{ model: "google/imagen-4", quality: "high", providerOptions: { gateway: { models: ["openai/gpt-image-1"] } } }, "quality"],
    ];
    for (const [body, field] of cases) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error).toMatchObject({ code: "BAD_REQUEST", details: { field } });
      expect(r.json.error.details.supported.length).toBeGreaterThan(0);
    }
    expect(up.requests).toHaveLength(0);
  });

  it("a request naming no size or quality is sent the priced tier and billed the catalog price", async () => {
    const g = await post({ model: "openai/gpt-image-1", n: 8 });
    expect(g.status).toBe(200);
    expect(up.requests[0]!.body).toMatchObject({ model: "gpt-image-1", n: 8, size: "1024x1024", quality: "medium" });
    expect(await costOf(g)).toBeCloseTo(8 * 0.042 + g.json.usage.input_tokens * 0.000005, 9);

    const d = await post({ model: "openai/dall-e-3", quality: "standard", size: "1024x1024" });
    expect(d.status).toBe(200);
    expect(up.requests[1]!.body).toMatchObject({ model: "dall-e-3", size: "1024x1024", quality: "standard" });
    expect(await costOf(d)).toBeCloseTo(0.04, 9);
  });
});
