// The catalog in Anthropic's Models API shape (anthropic-version sent: the Anthropic SDK, Claude Code) lists the
// language models only, as Anthropic's own lists what its Messages API serves: an embedding or rerank model picked
// from it would be refused by /v1/messages. The OpenAI-shaped list keeps the whole catalog.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("catalog-lang");
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    providers: {
      up: { protocol: "openai", base_url: "http://127.0.0.1:9/v1", api_key: "sk-fake-upstream" },
      co: { protocol: "cohere", base_url: "http://127.0.0.1:9", api_key: "co-fake" },
    },
    models: {
      "anthropic/claude-sonnet-4.5": { endpoints: [{ provider: "up", model: "claude-sonnet-4.5" }] },
      "openai/text-embedding-3-small": { type: "embedding", dimensions: 1536, endpoints: [{ provider: "up", model: "text-embedding-3-small", pricing: { input: "0.00000002" } }] },
      "openai/gpt-4o": { endpoints: [{ provider: "up", model: "gpt-4o" }] },
      "cohere/rerank-v3.5": { type: "reranking", endpoints: [{ provider: "co", model: "rerank-v3.5", pricing: { search_unit: "0.002" } }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
});

describe("the Anthropic-shaped model list", () => {
  it("the Anthropic SDK's models.list pages over the language models only; the OpenAI-shaped list still has every model", async () => {
    const anthropic = new Anthropic({ apiKey: KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });
    const seen: string[] = [];
    for await (const m of anthropic.models.list({ limit: 1 })) seen.push(m.id);
    expect(seen).toEqual(["anthropic/claude-sonnet-4.5", "openai/gpt-4o"]);
    const page = await anthropic.models.list();
    expect(page).toMatchObject({ has_more: false, first_id: "anthropic/claude-sonnet-4.5", last_id: "openai/gpt-4o" });

    const res = await fetch(`${gw.url}/api/v1/models`, { headers: { authorization: `Bearer ${KEY}` } });
    const all = (await res.json()) as { data: { id: string }[] };
    expect(all.data.map((m) => m.id)).toEqual(["anthropic/claude-sonnet-4.5", "openai/text-embedding-3-small", "openai/gpt-4o", "cohere/rerank-v3.5"]);
  });
});

describe("paging and retrieve agree with the Anthropic-shaped list", () => {
  const anthropicHeaders = { "x-api-key": KEY, "anthropic-version": "2023-06-01" };

  it("retrieving an embedding or rerank model in the Anthropic shape is Anthropic's 404 not_found_error; the OpenAI shape still describes it", async () => {
    const anthropic = new Anthropic({ apiKey: KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });
    const err = await anthropic.models.retrieve("openai/text-embedding-3-small").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    const res = await fetch(`${gw.url}/api/v1/models/cohere/rerank-v3.5`, { headers: anthropicHeaders });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("not_found_error");
    expect(body.error.message).toContain("cohere/rerank-v3.5");
    expect(body.error.message).toContain("not a language model");
    expect((await anthropic.models.retrieve("openai/gpt-4o")).id).toBe("openai/gpt-4o");

    const openai = await fetch(`${gw.url}/api/v1/models/openai/text-embedding-3-small`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(openai.status).toBe(200);
  });

  it("an embedding model's id as after_id/before_id is a 400 saying the Anthropic list leaves it out, not that the catalog lacks it", async () => {
    for (const field of ["after_id", "before_id"]) {
      const res = await fetch(`${gw.url}/api/v1/models?${field}=openai/text-embedding-3-small`, { headers: anthropicHeaders });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { type: string; message: string } };
      expect(body.error.type).toBe("invalid_request_error");
      expect(body.error.message).toContain(`${field}:`);
      expect(body.error.message).toContain("not a language model");
      expect(body.error.message).not.toContain("no model");
    }
    const unknown = await fetch(`${gw.url}/api/v1/models?after_id=nobody/nothing`, { headers: anthropicHeaders });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain('after_id: no model "nobody/nothing" in the catalog');
  });
});
