import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCohereDriver } from "./index.ts";
import { RERANK_KEY, startFakeCohere, type Reranker } from "../../test/upstreams/rerankers.ts";
import type { ProviderDriver, Target } from "../../core/contracts/provider.ts";
import type { RerankOutput } from "../../core/contracts/media.ts";

let fake: Reranker;
let driver: ProviderDriver;
beforeAll(async () => {
  fake = await startFakeCohere();
  driver = createCohereDriver("cohere", { protocol: "cohere", base_url: fake.baseUrl, api_key: RERANK_KEY }, { timeoutMs: 5000 });
});
afterAll(async () => {
  await driver?.close?.();
  await fake?.close();
});

const target = { modelId: "cohere/rerank-v3.5", provider: "cohere", upstreamModel: "rerank-v3.5", pricing: {} } as Target;
const opts = { signal: AbortSignal.timeout(5000) } as never;

describe("cohere rerank", () => {
  it("reads Cohere's ranking and its input tokens (meta.tokens.input_tokens)", async () => {
    const documents = Array.from({ length: 250 }, (_, i) => `doc ${i}`);
    const r = await driver.rerank!({ query: "doc", documents }, target, opts);
    const out = (r as { body: RerankOutput }).body;
    expect(out.inputTokens).toBeGreaterThan(0);
    expect(out.results).toHaveLength(250);
  });
});
