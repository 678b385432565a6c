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
