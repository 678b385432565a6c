// An embeddings batch is budgeted as what it is: up to 2048 inputs, each up to the model's context window. Before,
// the budget reserved one context window for the whole batch, so a small budget was overspent many times over
// (five concurrent 8.4 MB batches spent $1.37 of a $0.01 budget).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import Big from "big.js";
import { keyEntry, ledgerRecordOf, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAIMedia, OPENAI_KEY, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";
import { periodOf } from "../core/store/periods.ts";
import { picoToUsd } from "../core/money/money.ts";
import { awayFromPeriodEnd } from "./helpers/period-end.ts";

const OVER = testKey("batch-over");
const FITS = testKey("batch-fits");

let openai: FakeOpenAIMedia;
let gw: TestGateway;

beforeAll(async () => {
  openai = await startFakeOpenAIMedia();
  gw = await startTestGateway({
    store: { kind: "memory" },
    providers: { openai: { protocol: "openai", base_url: openai.baseUrl, api_key: OPENAI_KEY } },
    models: {
      // A small window and a high price, so a few short inputs do what a 2048-input batch does to a real budget.
      "acme/embed": { type: "embedding", context_window: 100, dimensions: 8, endpoints: [{ provider: "openai", model: "text-embedding-3-small", pricing: { input: "0.0001" } }] },
    },
    projects: {
      over: { keys: [keyEntry("over", OVER)], budget: { usd: "0.05", period: "day" } },
      fits: { keys: [keyEntry("fits", FITS)], budget: { usd: "0.05", period: "day" } },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
});

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const spentUsd = async (project: string) => {
  const p = periodOf("day", Date.now());
  return picoToUsd(await gw.gateway.store.spent(project, p.key, p.start));
};
/** 50 words: 50 tokens to the fake upstream, half the model's window. */
const text = (i: number) => Array.from({ length: 50 }, (_, j) => `w${i}x${j}`).join(" ");
// The budgets are a day's, and the spend is read for the day: each test runs within one day.
beforeEach(() => awayFromPeriodEnd("day"));

describe("an embeddings batch against a budget", () => {
  it("a batch whose inputs together cost more than the budget is refused before the upstream is called, not billed past it", async () => {
    const calls = openai.requests.length;
    // 20 inputs of 50 tokens: 1000 tokens, $0.10 at $0.0001, against $0.05 (one window's worth is only $0.01).
    const r = await postJson(`${gw.baseURL}/embeddings`, { model: "acme/embed", input: Array.from({ length: 20 }, (_, i) => text(i)) }, auth(OVER));
    expect(r.status).toBe(402);
    expect(r.json.error).toMatchObject({ code: "BUDGET_EXCEEDED", details: { project: "over", budget_usd: "0.05" } });
    expect(openai.requests.length).toBe(calls);
    expect(await spentUsd("over")).toBe("0");
  });

  it("a batch that fits is served and billed its inputs' tokens", async () => {
    const r = await postJson(`${gw.baseURL}/embeddings`, { model: "acme/embed", input: [text(1), text(2)] }, auth(FITS));
    expect(r.status).toBe(200);
    const tokens = r.json.usage.prompt_tokens;
    expect(tokens).toBe(100);
    const e = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(e.inputTokens).toBe(tokens);
    expect(new Big(await spentUsd("fits")).eq(new Big(tokens).times("0.0001"))).toBe(true);
  });
});
