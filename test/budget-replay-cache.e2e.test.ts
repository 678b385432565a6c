// The budget lets a keyed repeat through unreserved only when the budget would refuse it and the idempotency plugin
// will replay its kept answer for free. Three ways that went wrong:
// - with response-cache placed between budget and idempotency, such a repeat was served by the cache at its hit
//   price with no hold to check it against: 16 repeats on a $0.01 budget spent $0.0327;
// - every keyed request on a budgeted project looked its key up first (two extra store calls), room or not;
// - a reservation made late (the kept answer gone by the time the request ran) did not give back the extra hold a
//   cache hit priced above the worst case adds, which stayed held, unspent, for 15 minutes.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ulid } from "ulid";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeCohere, type Reranker } from "./upstreams/rerankers.ts";
import { CHAT_MODEL, cacheConfig, optIn } from "./helpers/cache-config.ts";

const BETWEEN = testKey("replaycachebetween");
const ROOMY = testKey("replaycacheroomy");
const LATE = testKey("replaycachelate");
const BUDGET = 0.01;
const HIT_PRICE = "0.002";

let openai: FakeOpenAI;
let cohere: Reranker;
let cacheFirst: TestGateway; // response-cache between budget and idempotency
let usual: TestGateway; // the default order
const dirs: string[] = [];

function config() {
  const dir = mkdtempSync(join(tmpdir(), "mg-replay-cache-"));
  dirs.push(dir);
  const c: any = cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir });
  const project = (key: string, usd: string) => ({ keys: [keyEntry("k", key)], budget: { usd, period: "total" }, cache: { hit_price_usd: HIT_PRICE } });
  c.projects.between = project(BETWEEN, String(BUDGET));
  c.projects.roomy = project(ROOMY, "100");
  c.projects.late = project(LATE, "100");
  return c;
}

beforeAll(async () => {
  openai = await startFakeOpenAI();
  cohere = await startFakeCohere();
  cacheFirst = await startTestGateway({
    ...config(),
    pipeline: ["auth", "allowlist", "budget", "rate-limit", "response-cache", "idempotency", "cache-marker", "router", "fallback",
      "stream-transcoder", "usage-metering", "guardrails"],
  });
  usual = await startTestGateway(config());
});
afterAll(async () => {
  await cacheFirst?.close();
  await usual?.close();
  await openai?.close();
  await cohere?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const body = (prompt: string) => ({ model: CHAT_MODEL, max_tokens: 5, messages: [{ role: "user", content: prompt }], ...optIn() });

async function chat(gw: TestGateway, key: string, b: unknown, idempotencyKey: string) {
  const res = await fetch(`${gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "x-mg-idempotency-key": idempotencyKey },
    body: JSON.stringify(b),
  });
  const text = await res.text();
  return { status: res.status, text, cache: res.headers.get("x-mg-cache"), replayed: res.headers.get("idempotent-replayed") };
}

async function spent(gw: TestGateway, project: string): Promise<number> {
  const entries = await gw.gateway.store.ledger({ project });
  return entries.reduce((sum, e) => sum + Number(e.costUsd), 0);
}

describe("a keyed repeat with response-cache between budget and idempotency", () => {
  it("is never served a priced hit past the budget: 16 repeats stay within $0.01", async () => {
    const b = body("sixteen keyed repeats");
    const key = ulid();
    const sent = [];
    for (let i = 0; i < 16; i++) sent.push(await chat(cacheFirst, BETWEEN, b, key));
    for (const s of sent) expect(s.status, s.text).toBe(200);
    // The miss, then hits at $0.002 while they fit; the rest are the key's answer replayed for nothing.
    expect(sent.filter((s) => s.cache === "hit").length).toBe(4);
    expect(sent.at(-1)!.replayed).toBe("true");
    expect(await spent(cacheFirst, "between")).toBeLessThanOrEqual(BUDGET);
    expect(await cacheFirst.gateway.store.reserved("between", "total", Date.now())).toBe(0n);
  });
});

describe("a keyed request on a budget with room", () => {
  it("costs no look-up of its key beyond the idempotency plugin's own claim", async () => {
    const store = usual.gateway.store;
    const begin = vi.spyOn(store, "idempotencyBegin");
    try {
      const r = await chat(usual, ROOMY, body("a budget with room"), ulid());
      expect(r.status, r.text).toBe(200);
      expect(begin).toHaveBeenCalledTimes(1);
      expect(begin.mock.calls[0]![2]).not.toMatch(/^probe:/);
    } finally {
      begin.mockRestore();
    }
  });
});

describe("a reservation made late", () => {
  it("gives back the extra a cache hit priced above the worst case held", async () => {
    const store = usual.gateway.store;
    const b = body("late reservation, priced hit");
    expect((await chat(usual, LATE, b, ulid())).cache).toBe("miss");
    // The budget refuses once and its look finds a kept answer, which the idempotency plugin's claim then misses
    // (it expired meanwhile): the request reserves then, and is served the cached answer at the hit price.
    const realReserve = store.reserve.bind(store);
    const reserve = vi.spyOn(store, "reserve").mockImplementation(realReserve);
    reserve.mockImplementationOnce(async () => ({ ok: false, spentPico: 0n, reservedPico: 0n }));
    const realBegin = store.idempotencyBegin.bind(store);
    const begin = vi.spyOn(store, "idempotencyBegin").mockImplementation(async (scope, hash, owner, ...rest) =>
      owner.startsWith("probe:") ? { state: "done", response: { kind: "json", status: 200, headers: {}, body: {} } } : realBegin(scope, hash, owner, ...rest));
    try {
      const r = await chat(usual, LATE, b, ulid());
      expect(r.status, r.text).toBe(200);
      expect(r.cache).toBe("hit");
      expect(await store.reserved("late", "total", Date.now())).toBe(0n);
    } finally {
      begin.mockRestore();
      reserve.mockRestore();
    }
  });
});
