// A budget holds against concurrent requests whose cost the body's size does not bound (docs/policies.md, budget):
// images named by URL (the upstream fetches them and bills their tokens as input) reserve input up to the context
// window, and chat's web_search_options reaches Claude with the max_uses the budget reserved. Each case sends a
// burst of concurrent requests on a key with a small daily budget; what the ledger records never exceeds it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Big from "big.js";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { DEFAULT_WEB_SEARCH_USES } from "../core/metering/server-tools.ts";

const VISION = testKey("vision-capped");
const SEARCH = testKey("search-capped");
/** What 10 high-detail images cost gpt-4o in prompt tokens: none of it is in the request body. */
const IMAGE_TOKENS = 10 * 765;

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  // The OpenAI fake bills the images as a real upstream would, and answers after every request has come in.
  openai.hook = (req, res) => {
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        id: "chatcmpl-img", object: "chat.completion", created: 0, model: req.body.model,
        choices: [{ index: 0, message: { role: "assistant", content: "A" }, finish_reason: "length" }],
        usage: { prompt_tokens: IMAGE_TOKENS, completion_tokens: 1, total_tokens: IMAGE_TOKENS + 1 },
      }));
    }, 500);
    return true;
  };
  anthropic.pace = () => 20;
  const limits = { rpm: 100_000, tpm: 500_000_000 };
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    providers: {
      openai: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
      anthropic: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
    },
    models: {
      "t/vision": { type: "language", context_window: 10_000, max_tokens: 4096, endpoints: [{ provider: "openai", model: "gpt-4o", pricing: { input: "0.0000025", output: "0.00001" } }] },
      "t/claude": { type: "language", context_window: 1000, max_tokens: 1000, endpoints: [{ provider: "anthropic", model: "claude-sonnet-4-5", pricing: { input: "0.000003", output: "0.000015", web_search: "0.01" } }] },
    },
    projects: {
      vision: { keys: [keyEntry("cam", VISION, { budget: { usd: "0.06", period: "day" } })], rate_limits: limits },
      search: { keys: [keyEntry("news", SEARCH, { budget: { usd: "0.25", period: "day" } })], rate_limits: limits },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await anthropic?.close();
});

const spent = async (project: string) => (await gw.gateway.store.ledger({ project })).reduce((s, e) => s.plus(e.costUsd), new Big(0));
const burst = (n: number, send: () => Promise<{ status: number }>) => Promise.all(Array.from({ length: n }, send));

describe("a small budget under concurrent requests", () => {
  it("40 chat requests with 10 image URLs each never spend past $0.06 (each reserves a context window of input)", async () => {
    const content = [{ type: "text", text: "Describe these." }, ...Array.from({ length: 10 }, (_, i) => ({ type: "image_url", image_url: { url: `https://example.com/photo-${i}.jpg` } }))];
    const body = { model: "t/vision", max_tokens: 1, messages: [{ role: "user", content }] };
    const answers = await burst(40, () => postJson(`${gw.baseURL}/chat/completions`, body, { authorization: `Bearer ${VISION}` }));
    const served = answers.filter((r) => r.status === 200).length;
    expect(served).toBeGreaterThan(0);
    expect(answers.every((r) => r.status === 200 || r.status === 402)).toBe(true);
    const total = await spent("vision");
    // Each served request really cost 7650 tokens of images: $0.019135.
    expect(total.toFixed()).toBe(new Big("0.019135").times(served).toFixed());
    expect(total.lte("0.06")).toBe(true);
  });

  it("20 chat requests asking Claude for web search never spend past $0.25 (each is held to, and reserves, 10 searches)", async () => {
    const body = { model: "t/claude", max_tokens: 10, stream: true, messages: [{ role: "user", content: "Everything new today [searches:30]" }], web_search_options: {} };
    const answers = await burst(20, async () => {
      const r = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${SEARCH}`, "content-type": "application/json" }, body: JSON.stringify(body) });
      await r.text();
      return r;
    });
    expect(answers.some((r) => r.status === 200)).toBe(true);
    for (const r of anthropic.requests) expect(r.body.tools).toEqual([{ type: "web_search_20250305", name: "web_search", max_uses: DEFAULT_WEB_SEARCH_USES }]);
    const ledger = await gw.gateway.store.ledger({ project: "search" });
    expect(ledger.length).toBeGreaterThan(0);
    for (const e of ledger) expect(e.webSearches).toBe(DEFAULT_WEB_SEARCH_USES);
    expect((await spent("search")).lte("0.25")).toBe(true);
  });
});
