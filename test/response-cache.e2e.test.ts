// The response cache end to end, in the shipped shape (SQLite store, full default pipeline, live keys with a budget
// and rate limits): a hit and a miss on every endpoint it serves, a hit that never reaches the upstream and replays
// the answer byte for byte, isolation between projects (and between live and sandbox keys), expiry, a miss for a
// change of any field that changes the answer and a hit for one that does not, answers that must not be kept, the
// ledger record and the metric of a hit, and answers that outlive the process in the store.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { startLoggedGateway } from "./helpers/log-capture.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeCohere, type Reranker } from "./upstreams/rerankers.ts";
import { CACHE_ALWAYS, CACHE_KEY, CACHE_OFF, CACHE_OTHER, CACHE_RPM, CACHE_SANDBOX, CACHE_TPM, CHAT_MODEL, EMBED_MODEL, RERANK_MODEL, cacheConfig, optIn } from "./helpers/cache-config.ts";

interface Sent { status: number; headers: Headers; text: string; json: any }

let openai: FakeOpenAI;
let cohere: Reranker;
let gw: TestGateway;
let dir: string;
const text = { current: undefined as string | undefined };

beforeAll(async () => {
  openai = await startFakeOpenAI();
  openai.textFor = () => text.current;
  cohere = await startFakeCohere();
  dir = mkdtempSync(join(tmpdir(), "mg-cache-e2e-"));
  gw = await startTestGateway(cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir, acmeCache: { hit_price_usd: "0.001" } }));
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await cohere?.close();
});
beforeEach(() => {
  openai.failures.length = 0;
  text.current = undefined;
});

async function post(path: string, body: unknown, key = CACHE_KEY, headers: Record<string, string> = {}): Promise<Sent> {
  const res = await fetch(`${gw.url}/api${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify(body),
  });
  const t = await res.text();
  let json: any;
  try {
    json = JSON.parse(t);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text: t, json };
}

const upstreamCalls = () => openai.requests.length + cohere.requests.length;
const chatBody = (prompt: string, extra: Record<string, unknown> = {}) => ({ model: CHAT_MODEL, messages: [{ role: "user", content: prompt }], max_tokens: 20, ...optIn(), ...extra });
const chat = (body: unknown, key = CACHE_KEY, headers: Record<string, string> = {}) => post("/v1/chat/completions", body, key, headers);
const ANTHROPIC = { "anthropic-version": "2023-06-01" };

interface Case { name: string; stream: boolean; send: () => Promise<Sent> }
const CASES: Case[] = [
  { name: "chat", stream: false, send: () => chat(chatBody("case chat")) },
  { name: "chat, streamed", stream: true, send: () => chat(chatBody("case chat stream", { stream: true, stream_options: { include_usage: true } })) },
  { name: "messages", stream: false, send: () => post("/v1/messages", { model: CHAT_MODEL, max_tokens: 20, messages: [{ role: "user", content: "case messages" }], ...optIn() }, CACHE_KEY, ANTHROPIC) },
  { name: "messages, streamed", stream: true, send: () => post("/v1/messages", { model: CHAT_MODEL, max_tokens: 20, stream: true, messages: [{ role: "user", content: "case messages stream" }], ...optIn() }, CACHE_KEY, ANTHROPIC) },
  { name: "responses", stream: false, send: () => post("/v1/responses", { model: CHAT_MODEL, input: "case responses", max_output_tokens: 20, ...optIn() }) },
  { name: "responses, streamed", stream: true, send: () => post("/v1/responses", { model: CHAT_MODEL, input: "case responses stream", max_output_tokens: 20, stream: true, ...optIn() }) },
  { name: "gemini generateContent", stream: false, send: () => post(`/v1beta/models/${CHAT_MODEL}:generateContent`, { contents: [{ role: "user", parts: [{ text: "case gemini" }] }], ...optIn() }) },
  { name: "gemini streamGenerateContent", stream: true, send: () => post(`/v1beta/models/${CHAT_MODEL}:streamGenerateContent?alt=sse`, { contents: [{ role: "user", parts: [{ text: "case gemini stream" }] }], ...optIn() }) },
  { name: "embeddings", stream: false, send: () => post("/v1/embeddings", { model: EMBED_MODEL, input: ["case embeddings", "a second text"], dimensions: 256, ...optIn() }) },
  { name: "gemini embedContent", stream: false, send: () => post(`/v1beta/models/${EMBED_MODEL}:embedContent`, { content: { parts: [{ text: "case gemini embed" }] }, outputDimensionality: 256, ...optIn() }) },
  { name: "rerank", stream: false, send: () => post("/v1/rerank", { model: RERANK_MODEL, query: "case rerank: capital of France", documents: ["Paris is in France", "Berlin is in Germany"], ...optIn() }) },
];

describe("a miss, then a hit, on every endpoint", () => {
  it.each(CASES)("$name", async (c) => {
    const before = upstreamCalls();
    const first = await c.send();
    expect(first.status).toBe(200);
    expect(first.headers.get("x-mg-cache")).toBe("miss");
    expect(upstreamCalls()).toBe(before + 1);

    const again = await c.send();
    expect(again.status).toBe(200);
    expect(again.headers.get("x-mg-cache")).toBe("hit");
    expect(upstreamCalls()).toBe(before + 1); // never reached the upstream
    // The same answer byte for byte: the same JSON, or the same events in the client's protocol.
    expect(again.text).toBe(first.text);
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(again.headers.get("content-type")).toContain(c.stream ? "text/event-stream" : "application/json");
    expect(Number(again.headers.get("age"))).toBeGreaterThanOrEqual(0);
    expect(again.headers.get("x-mg-cost-usd")).toBe("0.001");
    expect(again.headers.get("x-mg-original-request-id")).toBe(first.headers.get("x-request-id"));
    expect([first.headers.get("x-mg-provider"), again.headers.get("x-mg-provider")]).toEqual([first.headers.get("x-mg-resolved-provider"), "cache"]);
    expect(again.headers.get("x-mg-upstream-model")).toBe(first.headers.get("x-mg-upstream-model"));
    expect(again.headers.get("x-mg-generation-id")).not.toBe(first.headers.get("x-mg-generation-id"));

    // One ledger record for the hit: provider "cache", no tokens, the hit price, the endpoint it came in on.
    const ledger = await gw.gateway.store.ledger({ project: "acme" });
    const record = ledger.find((e) => e.requestId === again.headers.get("x-request-id"));
    expect(record).toMatchObject({ provider: "cache", cacheHit: true, attempts: 0, inputTokens: 0, outputTokens: 0, costUsd: "0.001", status: 200, outcome: "ok" });
    expect(record!.generationId).toBe(again.headers.get("x-mg-generation-id"));
    expect(ledger.find((e) => e.requestId === first.headers.get("x-request-id"))?.cacheHit).toBeUndefined();
  });
});

describe("what the key is made of", () => {
  const base = () => chatBody("semantic fields", { temperature: 0.2 });

  it("a change to any field that changes the answer is a miss", async () => {
    await chat(base());
    expect((await chat(base())).headers.get("x-mg-cache")).toBe("hit");
    const variants: Record<string, Record<string, unknown>> = {
      model: { model: "openai/gpt-4o" },
      messages: { messages: [{ role: "user", content: "semantic fields!" }] },
      "a system message": { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "semantic fields" }] },
      max_tokens: { max_tokens: 21 },
      temperature: { temperature: 0.3 },
      top_p: { top_p: 0.9 },
      n: { n: 2 },
      stop: { stop: ["x"] },
      seed: { seed: 7 },
      presence_penalty: { presence_penalty: 0.1 },
      frequency_penalty: { frequency_penalty: 0.1 },
      logit_bias: { logit_bias: { "50256": -100 } },
      response_format: { response_format: { type: "text" } },
      tools: { tools: [{ type: "function", function: { name: "noop", parameters: { type: "object", properties: {} } } }], tool_choice: "none" },
      "fallback models": { providerOptions: { gateway: { cache: true, models: ["openai/gpt-4o"] } } },
      "provider order": { providerOptions: { gateway: { cache: true, order: ["up"] } } },
      stream: { stream: true },
      "stream usage": { stream: true, stream_options: { include_usage: true } },
    };
    for (const [field, change] of Object.entries(variants)) {
      const before = upstreamCalls();
      const r = await chat({ ...base(), ...change });
      expect([field, r.status, r.headers.get("x-mg-cache")]).toEqual([field, 200, "miss"]);
      expect([field, upstreamCalls()]).toEqual([field, before + 1]);
    }
  });

  it("fields that do not change the answer share its entry: key order, the ttl asked, end-user ids, stream: false", async () => {
    const body = base();
    await chat(body);
    const before = upstreamCalls();
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    for (const variant of [
      reordered,
      { ...body, ...optIn({ ttl: 60 }) },
      { ...body, user: "end-user-2", metadata: { team: "search" } },
      { ...body, stream: false },
    ]) expect((await chat(variant)).headers.get("x-mg-cache")).toBe("hit");
    expect(upstreamCalls()).toBe(before);
  });

  it("messages: anthropic-beta is part of the key (in any order), so is system", async () => {
    const body = { model: CHAT_MODEL, max_tokens: 20, messages: [{ role: "user", content: "beta headers" }], ...optIn() };
    const send = (b: unknown, beta?: string) => post("/v1/messages", b, CACHE_KEY, { ...ANTHROPIC, ...(beta ? { "anthropic-beta": beta } : {}) });
    expect((await send(body, "a-2025,b-2025")).headers.get("x-mg-cache")).toBe("miss");
    expect((await send(body, "b-2025, a-2025")).headers.get("x-mg-cache")).toBe("hit");
    expect((await send(body)).headers.get("x-mg-cache")).toBe("miss");
    expect((await send(body, "a-2025")).headers.get("x-mg-cache")).toBe("miss");
    expect((await send({ ...body, system: "Be brief." }, "a-2025")).headers.get("x-mg-cache")).toBe("miss");
  });

  it("a streamed and a JSON request are separate entries, each replayed in its own form", async () => {
    const body = chatBody("stream or not");
    const json = await chat(body);
    const stream = await chat({ ...body, stream: true });
    expect(stream.headers.get("x-mg-cache")).toBe("miss");
    const [json2, stream2] = [await chat(body), await chat({ ...body, stream: true })];
    expect([json2.headers.get("x-mg-cache"), stream2.headers.get("x-mg-cache")]).toEqual(["hit", "hit"]);
    expect(json2.json).toEqual(json.json);
    expect(stream2.text).toBe(stream.text);
    expect(stream2.text.trim().endsWith("data: [DONE]")).toBe(true);
  });
});

describe("isolation", () => {
  it("another project, and a sandbox key of the same project, never see an answer kept for a live key", async () => {
    const body = chatBody("isolated answer");
    await chat(body);
    expect((await chat(body)).headers.get("x-mg-cache")).toBe("hit");
    const before = upstreamCalls();
    const other = await chat(body, CACHE_OTHER);
    expect(other.headers.get("x-mg-cache")).toBe("miss");
    expect(upstreamCalls()).toBe(before + 1);
    // Sandbox keys are answered by the simulator: the live answer must not reach them, nor theirs the live key.
    const sandbox = await chat(body, CACHE_SANDBOX);
    expect(sandbox.headers.get("x-mg-cache")).toBe("miss");
    expect(sandbox.json.choices[0].message.content).toContain("Simulated");
    expect((await chat(body, CACHE_SANDBOX)).headers.get("x-mg-cache")).toBe("hit");
    expect((await chat(body)).json.choices[0].message.content).not.toContain("Simulated");
  });
});

describe("opting in", () => {
  it("takes both the project (cache:) and the request (providerOptions.gateway.cache) by default", async () => {
    const plain = { model: CHAT_MODEL, max_tokens: 20, messages: [{ role: "user", content: "opt in twice" }] };
    const asked = { ...plain, ...optIn() };
    const before = upstreamCalls();
    // A project without cache: config never caches, even when the request asks.
    const off = [await chat(asked, CACHE_OFF), await chat(asked, CACHE_OFF)];
    expect(off.map((r) => [r.status, r.headers.get("x-mg-cache")])).toEqual([[200, null], [200, null]]);
    // A project with it (mode opt_in) does not cache a request that does not ask...
    const notAsked = [await chat(plain), await chat(plain)];
    expect(notAsked.map((r) => r.headers.get("x-mg-cache"))).toEqual([null, null]);
    expect(upstreamCalls()).toBe(before + 4);
    // ...and caches the same request once it does.
    expect([(await chat(asked)).headers.get("x-mg-cache"), (await chat(asked)).headers.get("x-mg-cache")]).toEqual(["miss", "hit"]);
    expect(upstreamCalls()).toBe(before + 5);
  });

  it("mode: always caches every request; cache: false declines", async () => {
    const body = { model: CHAT_MODEL, max_tokens: 20, messages: [{ role: "user", content: "always" }] };
    await chat(body, CACHE_ALWAYS);
    expect((await chat(body, CACHE_ALWAYS)).headers.get("x-mg-cache")).toBe("hit");
    const before = upstreamCalls();
    const declined = await chat({ ...body, ...optIn(false) }, CACHE_ALWAYS);
    expect(declined.headers.get("x-mg-cache")).toBeNull();
    expect(upstreamCalls()).toBe(before + 1);
  });

  it("a cache option of the wrong shape is a 400 naming the field", async () => {
    const r = await chat(chatBody("bad option", optIn({ ttl: "ten minutes" })));
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: "INVALID_REQUEST", param: "providerOptions.gateway.cache.ttl" });
  });
});

describe("expiry and refresh", () => {
  it("an answer is served until its ttl and asked for again after it", async () => {
    const body = chatBody("short lived", optIn({ ttl: 1 }));
    await chat(body);
    expect((await chat(body)).headers.get("x-mg-cache")).toBe("hit");
    await new Promise((r) => setTimeout(r, 1100));
    const before = upstreamCalls();
    expect((await chat(body)).headers.get("x-mg-cache")).toBe("miss");
    expect(upstreamCalls()).toBe(before + 1);
  });

  it("refresh: true asks the provider and keeps the new answer for the next requests", async () => {
    const body = chatBody("refresh me");
    text.current = "First answer.";
    await chat(body);
    text.current = "Second answer.";
    expect((await chat(body)).json.choices[0].message.content).toBe("First answer.");
    const refreshed = await chat({ ...body, ...optIn({ refresh: true }) });
    expect(refreshed.headers.get("x-mg-cache")).toBe("miss");
    expect(refreshed.json.choices[0].message.content).toBe("Second answer.");
    const after = await chat(body);
    expect(after.headers.get("x-mg-cache")).toBe("hit");
    expect(after.json.choices[0].message.content).toBe("Second answer.");
  });
});

describe("answers that are not kept", () => {
  it("an error answer: the next request asks the provider again", async () => {
    const body = chatBody("fails first");
    openai.failures.push({ kind: "status", status: 400 });
    expect((await chat(body)).status).toBe(400);
    const before = upstreamCalls();
    const r = await chat(body);
    expect([r.status, r.headers.get("x-mg-cache")]).toEqual([200, "miss"]);
    expect(upstreamCalls()).toBe(before + 1);
  });

  it("a stream the upstream cut short is not replayed as if it were the answer", async () => {
    const body = chatBody("cut short", { stream: true });
    openai.failures.push({ kind: "die-mid-stream", afterChunks: 3 });
    const cut = await chat(body);
    expect(cut.text).not.toContain("data: [DONE]");
    const before = upstreamCalls();
    const r = await chat(body);
    expect(r.headers.get("x-mg-cache")).toBe("miss");
    expect(r.text.trim().endsWith("data: [DONE]")).toBe(true);
    expect(upstreamCalls()).toBe(before + 1);
    expect((await chat(body)).headers.get("x-mg-cache")).toBe("hit");
  });
});

describe("policies, ledger and metrics", () => {
  it("a hit costs the project's hit price (0 by default), counted in its spend", async () => {
    const body = chatBody("priced hit");
    await chat(body);
    const spent = async (project: string) => Number(await gw.gateway.store.spent(project, "total", 0)) / 1e12;
    const before = await spent("acme");
    const hit = await chat(body);
    expect(hit.headers.get("x-mg-cache")).toBe("hit");
    expect(await spent("acme") - before).toBeCloseTo(0.001, 9);
    // `other` has no price of its own and the gateway none: its hits are free.
    await chat(body, CACHE_OTHER);
    const otherHit = await chat(body, CACHE_OTHER);
    expect(otherHit.headers.get("x-mg-cost-usd")).toBe("0");
    const rec = (await gw.gateway.store.ledger({ project: "other" })).find((e) => e.requestId === otherHit.headers.get("x-request-id"));
    expect(rec).toMatchObject({ cacheHit: true, costUsd: "0" });
  });

  it("a hit is one request to the rate limits and uses no tokens", async () => {
    const body = { model: CHAT_MODEL, max_tokens: 20, messages: [{ role: "user", content: "limited" }] };
    // rpm 3: one miss and two hits use the window up; the fourth request is refused like any other.
    const rs = [];
    for (let i = 0; i < 4; i++) rs.push(await chat(body, CACHE_RPM));
    expect(rs.map((r) => [r.status, r.headers.get("x-mg-cache")])).toEqual([[200, "miss"], [200, "hit"], [200, "hit"], [429, null]]);
    // tpm 300: each request is charged its estimate (~30 tokens) up front; a hit gives all of it back.
    const statuses = [];
    for (let i = 0; i < 25; i++) statuses.push((await chat(body, CACHE_TPM)).status);
    expect(statuses).toEqual(Array(25).fill(200));
  });

  it("the access log says hit or miss; a hit names the cache as its provider and costs the hit price", async () => {
    const logged = await startLoggedGateway(cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir: mkdtempSync(join(tmpdir(), "mg-cache-log-")), acmeCache: { hit_price_usd: "0.002" } }), {}, "info");
    try {
      const send = () => fetch(`${logged.baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${CACHE_KEY}` }, body: JSON.stringify(chatBody("logged")) }).then((r) => r.text());
      await send();
      await logged.log.accessOnce((l) => l.endpoint === "chat", 1);
      await send();
      const lines = await logged.log.accessOnce((l) => l.endpoint === "chat", 2);
      expect(lines.map((l) => [l.cache, l.provider])).toEqual([["miss", "up"], ["hit", "cache"]]);
      expect(lines[1]!.costUsd).toBe("0.002");
      expect(lines[1]!.attempts).toEqual([]);
    } finally {
      await logged.gw.close();
    }
  });

  it("gateway_cache_requests_total counts hits and misses by endpoint", async () => {
    const value = async (endpoint: string, result: string) => {
      const m = (await gw.gateway.metrics.registry.getMetricsAsJSON()).find((x) => x.name === "gateway_cache_requests_total");
      return m?.values.find((v) => v.labels.endpoint === endpoint && v.labels.result === result)?.value ?? 0;
    };
    const [hits, misses] = [await value("rerank", "hit"), await value("rerank", "miss")];
    const body = { model: RERANK_MODEL, query: "metrics query", documents: ["one", "two"], ...optIn() };
    await post("/v1/rerank", body);
    await post("/v1/rerank", body);
    await post("/v1/rerank", body);
    expect([await value("rerank", "hit") - hits, await value("rerank", "miss") - misses]).toEqual([2, 1]);
  });
});

describe("the store", () => {
  it("answers outlive the process: a new gateway on the same SQLite file answers from it", async () => {
    const body = chatBody("kept on disk");
    const first = await chat(body);
    await gw.close(); // the store write (in the background) is committed before the store closes

    gw = await startTestGateway(cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir, acmeCache: { hit_price_usd: "0.001" } }));
    const before = upstreamCalls();
    const again = await chat(body);
    expect(again.headers.get("x-mg-cache")).toBe("hit");
    expect(again.json).toEqual(first.json);
    expect(upstreamCalls()).toBe(before);
  });
});
