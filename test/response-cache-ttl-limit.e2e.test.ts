// The ttl a request asks for its answer, against the operator's cache.max_ttl_seconds, in the shipped shape (SQLite
// store, full default pipeline): one rule, as docs/caching.md states it. A longer ttl, of any size, is cut to the
// operator's limit (no limit of the gateway's own refuses it); a ttl that is not a positive whole number of seconds
// is a 400 naming the field.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { startTestGateway, postJson, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { CACHE_KEY, CHAT_MODEL, cacheConfig, optIn } from "./helpers/cache-config.ts";

const MAX_TTL_S = 604_800;

let openai: FakeOpenAI;
let cohere: FakeOpenAI;
let gw: TestGateway;
let dir: string;
let answer = "";

beforeAll(async () => {
  openai = await startFakeOpenAI();
  openai.textFor = () => answer;
  cohere = await startFakeOpenAI(); // unused: the config names a rerank host
  dir = mkdtempSync(join(tmpdir(), "mg-cache-ttl-"));
  gw = await startTestGateway(cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir, cache: { max_ttl_seconds: MAX_TTL_S } }));
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await cohere?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = (prompt: string, cache: unknown) =>
  postJson(`${gw.baseURL}/chat/completions`, { model: CHAT_MODEL, messages: [{ role: "user", content: prompt }], max_tokens: 20, ...optIn(cache) }, { authorization: `Bearer ${CACHE_KEY}` });

/** How long the SQLite store keeps the answer whose text is `text`, in seconds (once its write has landed). */
async function keptFor(text: string): Promise<number> {
  const db = new Database(join(dir, "gateway.db"), { readonly: true });
  try {
    return await vi.waitFor(() => {
      const rows = db.prepare("SELECT value FROM response_cache").all() as Array<{ value: string }>;
      const entry = rows.map((r) => JSON.parse(r.value)).find((e) => JSON.stringify(e.response).includes(text));
      if (!entry) throw new Error("not kept yet");
      return (entry.expiresAt - entry.storedAt) / 1000;
    }, { timeout: 5_000, interval: 20 });
  } finally {
    db.close();
  }
}

describe("a request's ttl longer than cache.max_ttl_seconds", () => {
  it.each([
    ["a little longer", 700_000],
    ["longer than a year", 99_999_999],
    ["far beyond any clock", 1e300],
  ])("%s (%d s) is accepted, kept max_ttl_seconds, and answered from the cache", async (_, ttl) => {
    answer = `kept for the limit ${ttl}`;
    const first = await ask(`ttl ${ttl}`, { ttl });
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get("x-mg-cache")).toBe("miss");
    expect(await keptFor(answer)).toBe(MAX_TTL_S);
    const again = await ask(`ttl ${ttl}`, { ttl });
    expect(again.status).toBe(200);
    expect(again.headers.get("x-mg-cache")).toBe("hit");
  });
});

describe("a ttl that is not a positive whole number of seconds", () => {
  it.each([0, -5, 1.5, "600", null])("%s is a 400 naming the field", async (ttl) => {
    const r = await ask("bad ttl", { ttl });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error).toMatchObject({ code: "INVALID_REQUEST", param: "providerOptions.gateway.cache.ttl" });
  });
});
