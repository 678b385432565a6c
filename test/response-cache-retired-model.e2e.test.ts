// A model whose every endpoint has retired is gone: from its `retires:` day the router answers it with a 404 naming
// the day and the replacement. The response cache runs before the router, and used to keep answering such a model
// for every prompt it had kept (up to the ttl), on every endpoint it serves; and to answer from a retired fallback
// model the router leaves out of the chain. A request listing such a fallback is still cached: only what that model
// itself answered is not replayed.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeCohere, type Reranker } from "./upstreams/rerankers.ts";
import { CACHE_KEY, CHAT_MODEL, cacheConfig, optIn } from "./helpers/cache-config.ts";

const RETIRING = "acme/retiring";
const RETIRING_EMBED = "acme/retiring-embed";
const DAY = "2026-11-01";
const BEFORE = Date.UTC(2026, 9, 31, 23, 55); // 5 minutes before the day (the project keeps answers 10 minutes)
const AFTER = Date.UTC(2026, 10, 1, 0, 1);

let openai: FakeOpenAI;
let cohere: Reranker;
let gw: TestGateway;

beforeAll(async () => {
  [openai, cohere] = await Promise.all([startFakeOpenAI(), startFakeCohere()]);
  const config = cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir: mkdtempSync(join(tmpdir(), "mg-cache-retired-")) });
  Object.assign(config.models, {
    [RETIRING]: { type: "language", context_window: 100_000, max_tokens: 1000, endpoints: [
      { provider: "up", model: "gpt-old", retires: DAY, replacement: CHAT_MODEL, pricing: { input: "0.000001", output: "0.000002" } },
    ] },
    [RETIRING_EMBED]: { type: "embedding", context_window: 128000, dimensions: 1536, endpoints: [
      { provider: "cohere", model: "embed-old", retires: DAY, pricing: { input: "0.0000001" } },
    ] },
  });
  gw = await startTestGateway(config);
});
afterEach(() => {
  vi.useRealTimers();
  openai.failures.length = 0;
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await cohere?.close();
});

const at = (now: number) => vi.useFakeTimers({ toFake: ["Date"], now, shouldAdvanceTime: true });

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.url}/api${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${CACHE_KEY}`, ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, headers: res.headers, json };
}

const CASES = [
  { name: "chat", model: RETIRING, send: () => post("/v1/chat/completions", { model: RETIRING, max_tokens: 20, messages: [{ role: "user", content: "retired chat" }], ...optIn() }) },
  { name: "messages", model: RETIRING, send: () => post("/v1/messages", { model: RETIRING, max_tokens: 20, messages: [{ role: "user", content: "retired messages" }], ...optIn() }, { "anthropic-version": "2023-06-01" }) },
  { name: "responses", model: RETIRING, send: () => post("/v1/responses", { model: RETIRING, input: "retired responses", max_output_tokens: 20, ...optIn() }) },
  { name: "gemini generateContent", model: RETIRING, send: () => post(`/v1beta/models/${RETIRING}:generateContent`, { contents: [{ role: "user", parts: [{ text: "retired gemini" }] }], ...optIn() }) },
  { name: "embeddings", model: RETIRING_EMBED, send: () => post("/v1/embeddings", { model: RETIRING_EMBED, input: "retired embeddings", ...optIn() }) },
];

describe("a model retired whole is not answered from the cache", () => {
  it.each(CASES)("$name: kept the day before, the 404 naming the day once it has come", async (c) => {
    at(BEFORE);
    const first = await c.send();
    expect(first.status).toBe(200);
    expect(first.headers.get("x-mg-cache")).toBe("miss");
    expect((await c.send()).headers.get("x-mg-cache")).toBe("hit");

    at(AFTER);
    const after = await c.send();
    expect(after.headers.get("x-mg-cache")).toBeNull();
    expect(after.status).toBe(404);
    const message: string = after.json.error.message; // each protocol's envelope has error.message
    expect(message).toContain(`Model "${c.model}" was retired on ${DAY}`);
    if (c.model === RETIRING) expect(message).toContain(`use ${CHAT_MODEL} instead`);
  });
});

describe("a retired fallback model is not answered from the cache", () => {
  it("an answer the fallback gave the day before is not replayed: the primary answers, as without the cache", async () => {
    const body = { model: CHAT_MODEL, max_tokens: 20, messages: [{ role: "user", content: "retired fallback" }], providerOptions: { gateway: { cache: true, models: [RETIRING] } } };
    at(BEFORE);
    openai.failures.push({ kind: "status", status: 503 }); // the primary fails once: the fallback answers, and is kept
    const first = await post("/v1/chat/completions", body);
    expect(first.status).toBe(200);
    expect(first.json.model).toBe(RETIRING);
    expect((await post("/v1/chat/completions", body)).headers.get("x-mg-cache")).toBe("hit");

    at(AFTER);
    const after = await post("/v1/chat/completions", body);
    expect(after.status).toBe(200);
    expect(after.headers.get("x-mg-cache")).toBe("miss");
    expect(after.json.model).toBe(CHAT_MODEL);
    expect(openai.requests.at(-1)?.body?.model).toBe("gpt-4o-mini");
    // The primary's answer replaced the fallback's: it is the one replayed now.
    const again = await post("/v1/chat/completions", body);
    expect(again.headers.get("x-mg-cache")).toBe("hit");
    expect(again.json.model).toBe(CHAT_MODEL);
  });

  // A client with a fixed fallback list (mode: always) naming a model retired since: its caching used to stop, with
  // no x-mg-cache header, every request reaching the provider.
  it("a request that lists it keeps being cached: the primary's answer kept before the day is replayed, new ones kept", async () => {
    const body = (content: string) => ({ model: CHAT_MODEL, max_tokens: 20, messages: [{ role: "user", content }], providerOptions: { gateway: { cache: true, models: [RETIRING] } } });
    at(BEFORE);
    const first = await post("/v1/chat/completions", body("primary answered"));
    expect(first.headers.get("x-mg-cache")).toBe("miss");
    expect(first.json.model).toBe(CHAT_MODEL);

    at(AFTER);
    const upstreamCalls = openai.requests.length;
    const kept = await post("/v1/chat/completions", body("primary answered"));
    expect(kept.status).toBe(200);
    expect(kept.headers.get("x-mg-cache")).toBe("hit");
    expect(kept.json.model).toBe(CHAT_MODEL);
    expect((await post("/v1/chat/completions", body("asked after the day"))).headers.get("x-mg-cache")).toBe("miss");
    expect((await post("/v1/chat/completions", body("asked after the day"))).headers.get("x-mg-cache")).toBe("hit");
    expect(openai.requests.length).toBe(upstreamCalls + 1); // only the new prompt's miss reached the provider
  });
});
