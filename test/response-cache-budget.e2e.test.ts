// Cache hits never spend past a budget. The budget reserves a request's worst case before the cache is asked; a hit is
// billed at the hit price, which may be more (here $0.001 against a worst case of a few millionths of a dollar). Before
// the fix a miss and two hits spent $0.002 of a $0.0015 budget, and 20 concurrent hits five times the budget. Now a hit
// first holds the rest of its price; when the budget has no room for it the request goes to the provider (whose
// answer costs at most what was reserved), so the ledger stays within the budget — the project's and a key's own.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeCohere, type Reranker } from "./upstreams/rerankers.ts";
import { CHAT_MODEL, cacheConfig, optIn } from "./helpers/cache-config.ts";

const SEQ = testKey("cachebudgetseq");
const CONC = testKey("cachebudgetconc");
const KEYB = testKey("cachebudgetkey");
const BUDGET = 0.0015;

let openai: FakeOpenAI;
let cohere: Reranker;
let gw: TestGateway;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  cohere = await startFakeCohere();
  const dir = mkdtempSync(join(tmpdir(), "mg-cache-budget-"));
  const config: any = cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir });
  const priced = { cache: { hit_price_usd: "0.001" } };
  config.projects.seq = { keys: [keyEntry("s", SEQ)], budget: { usd: String(BUDGET), period: "total" }, ...priced };
  config.projects.conc = { keys: [keyEntry("c", CONC)], budget: { usd: String(BUDGET), period: "total" }, ...priced };
  // No project budget: the key's own is the one a hit must respect.
  config.projects.keyb = { keys: [keyEntry("k", KEYB, { budget: { usd: String(BUDGET), period: "total" } })], ...priced };
  gw = await startTestGateway(config);
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await cohere?.close();
});

const body = (prompt: string) => ({ model: CHAT_MODEL, max_tokens: 5, messages: [{ role: "user", content: prompt }], ...optIn() });

async function chat(key: string, b: unknown): Promise<{ status: number; cache: string | null }> {
  const res = await fetch(`${gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify(b),
  });
  await res.text();
  return { status: res.status, cache: res.headers.get("x-mg-cache") };
}

/** What the ledger shows for a project: dollars spent, and how many records were hits. */
async function ledger(project: string) {
  const entries = await gw.gateway.store.ledger({ project });
  const spent = entries.reduce((sum, e) => sum + Number(e.costUsd), 0);
  return { spent, hits: entries.filter((e) => e.cacheHit).length, records: entries.length };
}

describe("a hit priced above the request's worst case", () => {
  it("one at a time: the hit that would pass the budget is answered by the provider instead", async () => {
    const b = body("hit price over budget");
    const sent = [];
    for (let i = 0; i < 4; i++) sent.push(await chat(SEQ, b));
    // Miss ($0.0000x), hit ($0.001); a second hit would make $0.002: the provider answers those, within the budget.
    expect(sent.map((s) => s.status)).toEqual([200, 200, 200, 200]);
    expect(sent.map((s) => s.cache)).toEqual(["miss", "hit", "miss", "miss"]);
    const l = await ledger("seq");
    expect(l.hits).toBe(1);
    expect(l.spent).toBeLessThanOrEqual(BUDGET);
    expect(await gw.gateway.store.reserved("seq", "total", Date.now())).toBe(0n); // nothing left held
  });

  it("20 at once: the ledger stays within the budget", async () => {
    const b = body("hit price over budget, concurrent");
    expect((await chat(CONC, b)).cache).toBe("miss");
    const sent = await Promise.all(Array.from({ length: 20 }, () => chat(CONC, b)));
    expect(sent.every((s) => s.status === 200 || s.status === 402)).toBe(true);
    const l = await ledger("conc");
    expect(l.hits).toBe(1); // $0.001 of the $0.0015: room for one
    expect(l.spent).toBeLessThanOrEqual(BUDGET);
    expect(sent.filter((s) => s.cache === "hit").length).toBe(1);
    expect(await gw.gateway.store.reserved("conc", "total", Date.now())).toBe(0n);
  });

  it("a key's own budget holds a hit's price too", async () => {
    const b = body("hit price over the key's budget");
    const sent = [];
    for (let i = 0; i < 3; i++) sent.push(await chat(KEYB, b));
    expect(sent.map((s) => s.cache)).toEqual(["miss", "hit", "miss"]);
    const l = await ledger("keyb");
    expect(l.hits).toBe(1);
    expect(l.spent).toBeLessThanOrEqual(BUDGET);
  });
});
