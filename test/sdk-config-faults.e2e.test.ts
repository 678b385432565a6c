// Faults of the gateway's own configuration, as the official SDKs see them: a provider disabled for an unset ${VAR},
// a Bedrock provider without credentials, an upstream refusing the gateway's key. A retry of that endpoint cannot
// succeed before an operator acts, so none is made: dispatch moves on to the model's next endpoint (which may be
// configured right), and when none serves, no retry by the openai and Anthropic SDKs
// (x-should-retry: false), not by @google/genai or Gemini CLI, which decide on the HTTP status alone (400
// FAILED_PRECONDITION on the Gemini protocol). A transient failure is still retried by all of them.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI } from "@google/genai";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("cfgfault");
const pricing = { input: "0.000001", output: "0.000002" };
const model = (...endpoints: Array<[string, string]>) => ({ type: "language", context_window: 1000, max_tokens: 100, endpoints: endpoints.map(([provider, m]) => ({ provider, model: m, pricing })) });

let up: FakeOpenAI;
let gem: FakeGemini;
let gw: TestGateway;

beforeAll(async () => {
  up = await startFakeOpenAI();
  gem = await startFakeGemini();
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { backoff_ms: 1 },
    providers: {
      up: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" },
      gem: { protocol: "gemini", base_url: gem.baseUrl, api_key: FAKE_GEMINI_KEY },
      off: { protocol: "openai", base_url: up.baseUrl, api_key: "${MG_TEST_CFGFAULT_UNSET_KEY}" },
      nocreds: { protocol: "bedrock", region: "us-east-1", base_url: up.baseUrl },
    },
    models: {
      "google/g": model(["gem", "gemini-test"]),
      "google/g-then-up": model(["gem", "gemini-test"], ["up", "gpt-x"]),
      "openai/off": model(["off", "gpt-x"]),
      "aws/nocreds": model(["nocreds", "meta.llama3-70b-instruct-v1:0"]),
      "aws/nocreds-then-up": model(["nocreds", "meta.llama3-70b-instruct-v1:0"], ["up", "gpt-x"]),
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  }, { env: { AWS_ACCESS_KEY_ID: "", AWS_SECRET_ACCESS_KEY: "", AWS_SESSION_TOKEN: "", AWS_BEARER_TOKEN_BEDROCK: "" } });
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
  await gem?.close();
});
beforeEach(() => {
  up.requests.length = 0;
  gem.requests.length = 0;
  gem.failures.length = 0;
});

/** The gateway's answers as the SDK got them. */
function recorder() {
  const seen: Array<[number, string | null]> = [];
  const f = async (url: any, init: any) => {
    const r = await fetch(url, init);
    seen.push([r.status, r.headers.get("x-should-retry")]);
    return r;
  };
  return { seen, fetch: f as typeof fetch };
}

const openai = (f: typeof fetch) => new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 2, fetch: f });
const anthropic = (f: typeof fetch) => new Anthropic({ apiKey: KEY, baseURL: `${gw.url}/api`, maxRetries: 2, fetch: f });
const genai = (f: typeof fetch) => new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: `${gw.url}/api`, fetch: f, retryOptions: { attempts: 3, initialDelay: 0.05, maxDelay: 0.1 } } } as any);

describe("a provider disabled in the config (its ${VAR} unset)", () => {
  it("openai SDK: one 502 naming the variable, x-should-retry: false, no retry", async () => {
    const rec = recorder();
    const err: any = await openai(rec.fetch).chat.completions.create({ model: "openai/off", messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(err.status).toBe(502);
    expect(err.error.message).toContain("$MG_TEST_CFGFAULT_UNSET_KEY is not set");
    expect(rec.seen).toEqual([[502, "false"]]);
  });

  it("Anthropic SDK: no retry", async () => {
    const rec = recorder();
    const err: any = await anthropic(rec.fetch).messages.create({ model: "openai/off", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(rec.seen).toEqual([[502, "false"]]);
  });

  it("@google/genai with retryOptions: one 400 FAILED_PRECONDITION, no retry; the gateway's code still in ErrorInfo", async () => {
    const rec = recorder();
    const err: any = await genai(rec.fetch).models.generateContent({ model: "openai/off", contents: "hi" }).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(400);
    expect(JSON.parse(err.message).error).toMatchObject({ code: 400, status: "FAILED_PRECONDITION", details: [expect.objectContaining({ reason: "UPSTREAM_ERROR" })] });
    expect(rec.seen).toEqual([[400, "false"]]);
  });
});

describe("a Bedrock provider without credentials", () => {
  it("as a model's only endpoint: a 502 not to retry", async () => {
    const rec = recorder();
    const err: any = await openai(rec.fetch).chat.completions.create({ model: "aws/nocreds", messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(err.status).toBe(502);
    expect(err.error.details).toMatchObject({ provider: "nocreds", reason: "no_credentials" });
    expect(rec.seen).toEqual([[502, "false"]]);
    expect(up.requests).toHaveLength(0);
  });

  it("before a working endpoint: the request is served by the next endpoint, at once", async () => {
    const rec = recorder();
    const r = await openai(rec.fetch).chat.completions.create({ model: "aws/nocreds-then-up", messages: [{ role: "user", content: "hi" }] });
    expect(r.choices[0]!.message.content?.length).toBeGreaterThan(0);
    expect(rec.seen).toEqual([[200, null]]);
    expect(up.requests).toHaveLength(1);
  });
});

describe("Gemini protocol: an upstream refusing the gateway's key", () => {
  it.each([401, 403])("upstream %i: @google/genai gets 400 FAILED_PRECONDITION and does not retry", async (status) => {
    gem.failures.push({ kind: "status", status });
    const rec = recorder();
    const err: any = await genai(rec.fetch).models.generateContent({ model: "google/g", contents: "hi" }).catch((e) => e);
    expect(err.status).toBe(400);
    const body = JSON.parse(err.message).error;
    expect(body).toMatchObject({ status: "FAILED_PRECONDITION", details: [expect.objectContaining({ reason: "UPSTREAM_ERROR" })] });
    expect(body.details[0].metadata.upstream_status).toBe(String(status));
    expect(rec.seen).toEqual([[400, "false"]]);
    expect(gem.requests).toHaveLength(1);
    // The ledger and the metrics record the status the client was sent, as the access log does.
    const records = await gw.gateway.store.ledger({ project: "p" });
    expect(records.at(-1)).toMatchObject({ model: "google/g", status: 400 });
    // The metrics count the status the client was sent, as the access log does.
    const text = await gw.gateway.metrics.registry.metrics();
    expect(text).toMatch(/gateway_requests_total\{[^}]*model="google\/g"[^}]*code="400"[^}]*\}/);
    // A 502 series may be there at 0 (series the config names start at 0): none may have counted.
    expect(text).not.toMatch(/gateway_requests_total\{[^}]*model="google\/g"[^}]*code="502"[^}]*\} [1-9]/);
  });

  it.each([401, 403])("upstream %i before a working endpoint: the next endpoint serves it, the refusing one is asked once", async (status) => {
    gem.failures.push({ kind: "status", status });
    const rec = recorder();
    const r = await openai(rec.fetch).chat.completions.create({ model: "google/g-then-up", messages: [{ role: "user", content: "hi" }] });
    expect(r.choices[0]!.message.content?.length).toBeGreaterThan(0);
    expect(rec.seen).toEqual([[200, null]]);
    expect(gem.requests).toHaveLength(1);
    expect(up.requests).toHaveLength(1);
  });

  it("a transient failure is still 502 UNAVAILABLE, which the SDK retries", async () => {
    gem.failures.push({ kind: "status", status: 500 }, { kind: "status", status: 500 }); // the gateway's own retry too
    const rec = recorder();
    const r = await genai(rec.fetch).models.generateContent({ model: "google/g", contents: "hi" });
    expect(r.text?.length).toBeGreaterThan(0);
    expect(rec.seen).toEqual([[502, null], [200, null]]);
  });
});
