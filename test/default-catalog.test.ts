// The shipped catalog (catalog/models.yaml, included by gateway.yaml): loads with the default providers, every entry
// is served in the spec's shape, says where its price came from, and gateway.yaml entries override it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { startTestGateway, testKey, keyEntry, type TestGateway } from "./helpers/gateway.ts";
import { validateModelEndpoints, validateModelList } from "../core/generated/validators.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const KEY = testKey("catalog-default", true);
let gw: TestGateway;

beforeAll(async () => {
  const base = YAML.parse(readFileSync(join(root, "gateway.yaml"), "utf8"));
  const imagen = YAML.parse(readFileSync(join(root, "catalog", "models.yaml"), "utf8")).models["google/imagen-4"];
  gw = await startTestGateway({
    include: [join(root, "catalog", "models.yaml")],
    providers: base.providers,
    models: {
      "openai/gpt-4o": { name: "GPT-4o (our deployment)", endpoints: [{ provider: "openai", model: "gpt-4o-2024-11-20", pricing: { input: "0.000002", output: "0.000008" } }] },
      // The catalog's image models have all retired: an operator's own entry (Imagen 4's, without its retires:).
      "acme/imagen": { ...imagen, endpoints: imagen.endpoints.map(({ retires: _r, ...ep }: any) => ep) },
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  }, { env: { OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" } });
});

afterAll(async () => {
  await gw?.close();
});

const get = async (path: string) => (await fetch(`${gw.baseURL}${path}`, { headers: { authorization: `Bearer ${KEY}` } })).json() as Promise<any>;

describe("default catalog", () => {
  it("serves every model in the spec's shape, all five types, from the major creators", async () => {
    const list = await get("/models");
    expect(validateModelList(list), JSON.stringify(validateModelList.errors)).toBe(true);
    expect(list.data.length).toBeGreaterThanOrEqual(40);
    const catalog = YAML.parse(readFileSync(join(root, "catalog", "models.yaml"), "utf8")).models as Record<string, any>;
    expect(new Set(Object.values(catalog).map((m: any) => m.type))).toEqual(new Set(["language", "embedding", "reranking", "image", "video"]));
    // Every image and video model it lists has been shut down upstream (Imagen 4, Veo 3, GPT Image 1, Sora 2), so
    // the catalog served today has none; an operator's own entry is the image model here.
    const shipped = list.data.filter((m: any) => !m.id.startsWith("acme/"));
    expect(new Set(shipped.map((m: any) => m.type))).toEqual(new Set(["language", "embedding", "reranking"]));
    const creators = new Set(list.data.map((m: any) => m.id.split("/")[0]));
    for (const c of ["openai", "anthropic", "google", "mistral", "meta", "cohere", "voyage", "deepseek", "xai"]) expect(creators).toContain(c);
  });

  it("every entry says where its price came from and when, and has a real price", async () => {
    const catalog = YAML.parse(readFileSync(join(root, "catalog", "models.yaml"), "utf8")).models as Record<string, any>;
    for (const [id, m] of Object.entries(catalog)) {
      expect(m.price_source, id).toMatch(/https:\/\/\S+.*20\d\d-\d\d/);
      expect(m.released, id).toBeGreaterThan(1_600_000_000);
      for (const ep of m.endpoints) expect(Object.values(ep.pricing).some((v) => Number(v) > 0), `${id} @ ${ep.provider}`).toBe(true);
    }
  });

  it("a model can run on several hosts with their own prices", async () => {
    const catalog = YAML.parse(readFileSync(join(root, "catalog", "models.yaml"), "utf8")).models as Record<string, any>;
    const llama = catalog["meta/llama-3.3-70b"];
    expect(llama.endpoints.map((e: any) => e.provider)).toEqual(["groq", "fireworks", "deepinfra", "bedrock"]);
    expect(new Set(llama.endpoints.map((e: any) => e.pricing.input)).size).toBe(4);
  });

  it("entries in gateway.yaml override the included ones model by model", async () => {
    const m = await get("/models/openai/gpt-4o");
    expect(m.name).toBe("GPT-4o (our deployment)");
    expect(m.pricing.input).toBe("0.000002");
    expect((await get("/models/openai/gpt-4o-mini")).name).toBe("GPT-4o mini");
  });

  it("the endpoints view of every model validates", async () => {
    const list = await get("/models");
    for (const m of list.data) {
      const r = await get(`/models/${m.id}/endpoints`);
      expect(validateModelEndpoints(r), `${m.id}: ${JSON.stringify(validateModelEndpoints.errors)}`).toBe(true);
    }
  });
});

describe("default catalog through every endpoint (sandbox key, simulator)", () => {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${gw.baseURL}${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` }, body: JSON.stringify(body) });
    return { status: res.status, json: await res.json() as any };
  };

  it("a model of each type answers on its endpoint", async () => {
    expect((await post("/chat/completions", { model: "anthropic/claude-haiku-4.5", messages: [{ role: "user", content: "hi" }] })).status).toBe(200);
    const emb = await post("/embeddings", { model: "voyage/voyage-3.5", input: ["a", "b"], dimensions: 512 });
    expect(emb.status).toBe(200);
    expect(emb.json.data[0].embedding).toHaveLength(512);
    // Voyage's 3.5 / 3.5-lite / code-3 also give 2048 (above their 1024 default); sizes it does not list stay 422.
    for (const model of ["voyage/voyage-3.5", "voyage/voyage-3.5-lite", "voyage/voyage-code-3"]) {
      const big = await post("/embeddings", { model, input: "a", dimensions: 2048 });
      expect(big.status, model).toBe(200);
      expect(big.json.data[0].embedding).toHaveLength(2048);
      expect((await post("/embeddings", { model, input: "a", dimensions: 1536 })).status, model).toBe(422);
    }
    expect((await post("/embeddings", { model: "mistral/mistral-embed", input: "a", dimensions: 256 })).status).toBe(422);
    expect((await post("/rerank", { model: "cohere/rerank-v3.5", query: "q", documents: ["a", "b"] })).status).toBe(200);
    // The catalog's image models are marked retired (Imagen 4 on 2026-08-17, GPT Image 1 on 2026-10-23): a 404
    // naming the day; an own entry with Imagen 4's limits answers, and its max_images still holds.
    expect((await post("/images/generations", { model: "google/imagen-4", prompt: "a red square" })).status).toBe(404);
    expect((await post("/images/generations", { model: "acme/imagen", prompt: "a red square" })).status).toBe(200);
    expect((await post("/images/generations", { model: "acme/imagen", prompt: "a red square", n: 5 })).status).toBe(400);
  });
});
