// A fail_closed moderation that cannot run, as the official SDKs see it: a failure a retry would meet again (the
// moderation provider refusing the gateway's key) must not be retried, since every retry of an output-side failure
// runs and bills a whole generation the client never sees; a transient one (the moderation's 503) stays retryable.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "./upstreams/openai.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("modretry");
const JUDGED = testKey("modjudged");
const MODEL = "openai/gpt-4o-mini";

let fake: FakeOpenAI;
let mod: FakeOpenAI;
let gw: TestGateway;
/** How the moderation endpoint answers the next calls: a status and OpenAI's error body. */
let modAnswer: { status: number; error: Record<string, unknown> } | undefined;

function moderations(req: RecordedRequest, res: ServerResponse): boolean {
  if (req.path !== "/v1/moderations") return false;
  if (modAnswer) {
    res.writeHead(modAnswer.status, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: modAnswer.error }));
    return true;
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ id: "modr-1", model: "omni-moderation-latest", results: [{ flagged: false, categories: {} }] }));
  return true;
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  mod = await startFakeOpenAI();
  mod.hook = moderations;
  const pricing = { input: "0.000001", output: "0.000002" };
  gw = await startTestGateway({
    store: { kind: "memory" },
    providers: {
      up: { protocol: "openai", base_url: fake.baseUrl, api_key: "sk-fake-upstream" },
      mod: { protocol: "openai", base_url: mod.baseUrl, api_key: "sk-fake-moderation" },
      off: { protocol: "openai", base_url: fake.baseUrl, api_key: "${MG_TEST_MODRETRY_UNSET_KEY}" }, // disabled: unset
    },
    models: {
      [MODEL]: { type: "language", context_window: 1000, max_tokens: 100, endpoints: [{ provider: "up", model: "gpt-4o-mini", pricing }] },
      "openai/judge-off": { type: "language", context_window: 1000, max_tokens: 100, endpoints: [{ provider: "off", model: "gpt-4o", pricing }] },
    },
    projects: {
      mod: { keys: [keyEntry("k", KEY)], guardrails: { moderation: { provider: "mod", on: ["output"], on_error: "fail_closed" } } },
      // A judge the config cannot call: its only provider is disabled.
      judged: { keys: [keyEntry("j", JUDGED)], guardrails: { moderation: { judge: "openai/judge-off", on: ["input"] } } },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
  await mod?.close();
});
beforeEach(() => {
  modAnswer = undefined;
  fake.requests.length = 0;
  mod.requests.length = 0;
});

/** Every answer the SDK got (status and retry headers), through its own fetch. */
function recorder() {
  const seen: Array<{ status: number; retryAfter: string | null; shouldRetry: string | null }> = [];
  const f = async (url: any, init: any) => {
    const r = await fetch(url, init);
    seen.push({ status: r.status, retryAfter: r.headers.get("retry-after"), shouldRetry: r.headers.get("x-should-retry") });
    return r;
  };
  return { seen, fetch: f as typeof fetch };
}

const generations = async () => (await gw.gateway.store.ledger({ project: "mod" })).filter((e) => e.endpoint !== "moderation");

describe("output moderation refused by its provider (401 invalid_api_key), fail_closed", () => {
  it("the openai SDK gets one 502 it does not retry: one generation run and billed, not three", async () => {
    modAnswer = { status: 401, error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } };
    const billedBefore = (await generations()).length;
    const rec = recorder();
    const client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 2, fetch: rec.fetch });
    const err: any = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 20 }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(502);
    expect(err.error).toMatchObject({ code: "GUARDRAIL_UNAVAILABLE", details: { rule: "moderation", on: "output" } });
    expect(err.error.message).toContain("cannot be called as configured: HTTP 401");
    expect(rec.seen).toEqual([{ status: 502, retryAfter: null, shouldRetry: "false" }]);
    expect(fake.requests.filter((r) => r.path === "/v1/chat/completions")).toHaveLength(1);
    const billed = (await generations()).slice(billedBefore);
    expect(billed).toHaveLength(1);
    expect(billed[0]).toMatchObject({ outcome: "blocked", guardrail: "block:moderation-unavailable" }); // an outage, not a content block
  });

  it("the Anthropic SDK does not retry it either", async () => {
    modAnswer = { status: 403, error: { message: "Project does not have access to model", type: "invalid_request_error", code: "model_not_found" } };
    const rec = recorder();
    const client = new Anthropic({ apiKey: KEY, baseURL: `${gw.url}/api`, maxRetries: 2, fetch: rec.fetch });
    const err: any = await client.messages.create({ model: MODEL, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(rec.seen.map((s) => [s.status, s.shouldRetry])).toEqual([[502, "false"]]);
    expect(fake.requests).toHaveLength(1);
  });

  it("the moderation account out of credit (429 insufficient_quota): one 502 not to retry, as its 402 would be", async () => {
    modAnswer = { status: 429, error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", code: "insufficient_quota" } };
    const rec = recorder();
    const client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 2, fetch: rec.fetch });
    const err: any = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 20 }).catch((e) => e);
    expect(err.error).toMatchObject({ code: "GUARDRAIL_UNAVAILABLE", details: { rule: "moderation", on: "output" } });
    expect(err.error.message).toContain("out of credit");
    expect(rec.seen).toEqual([{ status: 502, retryAfter: null, shouldRetry: "false" }]);
    expect(fake.requests.filter((r) => r.path === "/v1/chat/completions")).toHaveLength(1);
  });

  it("a judge model the config cannot call: 502 not to retry, before any generation", async () => {
    const rec = recorder();
    const client = new OpenAI({ apiKey: JUDGED, baseURL: gw.baseURL, maxRetries: 2, fetch: rec.fetch });
    const err: any = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(err.error).toMatchObject({ code: "GUARDRAIL_UNAVAILABLE", details: { on: "input" } });
    expect(rec.seen.map((s) => [s.status, s.shouldRetry])).toEqual([[502, "false"]]);
    expect(fake.requests).toHaveLength(0);
  });
});

describe("a transient moderation failure stays retryable", () => {
  it("the moderation's 503: 503 GUARDRAIL_UNAVAILABLE with Retry-After, which the SDK retries", async () => {
    modAnswer = { status: 503, error: { message: "overloaded", type: "server_error" } };
    const rec = recorder();
    const client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 1, fetch: rec.fetch });
    const err: any = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(err.status).toBe(503);
    expect(err.error.code).toBe("GUARDRAIL_UNAVAILABLE");
    expect(rec.seen).toEqual([{ status: 503, retryAfter: "1", shouldRetry: null }, { status: 503, retryAfter: "1", shouldRetry: null }]);
  });
});
