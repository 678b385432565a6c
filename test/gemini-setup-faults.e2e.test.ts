// Google refuses the gateway's own setup with a 400: an API key it does not know (INVALID_ARGUMENT, ErrorInfo
// API_KEY_INVALID) or a project it will not serve (FAILED_PRECONDITION: the location, billing). That is the
// endpoint's fault, as a 401/403 is: the model's next endpoint serves, the attempt counts as a failed one on the
// dashboard (outcome="error"), and with nothing else to serve the client hears of the gateway's fault, never
// "your request is invalid".
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("gsetup");
const pricing = { input: "0.000001", output: "0.000002" };
const model = (...providers: string[]) => ({ type: "language", context_window: 1000, max_tokens: 100, endpoints: providers.map((provider) => ({ provider, model: "gemini-test", pricing })) });
const LOCATION = { kind: "google", status: 400, rpcStatus: "FAILED_PRECONDITION", message: "User location is not supported for the API use." } as const;

let gem: FakeGemini;
let gw: TestGateway;

beforeAll(async () => {
  gem = await startFakeGemini();
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { backoff_ms: 1 },
    providers: {
      gbadkey: { protocol: "gemini", base_url: gem.baseUrl, api_key: "AIza-revoked-key" },
      gok: { protocol: "gemini", base_url: gem.baseUrl, api_key: FAKE_GEMINI_KEY },
    },
    models: { "google/badkey-then-ok": model("gbadkey", "gok"), "google/badkey": model("gbadkey"), "google/ok-alone": model("gok") },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
});
afterAll(async () => {
  await gw?.close();
  await gem?.close();
});
beforeEach(() => {
  gem.requests.length = 0;
  gem.failures.length = 0;
});

const chat = (model: string) => postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
const generate = (model: string) =>
  postJson(`${gw.url}/api/v1beta/models/${model}:generateContent`, { contents: [{ role: "user", parts: [{ text: "hi" }] }] }, { "x-goog-api-key": KEY });
const keysSent = () => gem.requests.map((r) => r.headers["x-goog-api-key"]);

async function failedAttempts(provider: string, outcome: string): Promise<number> {
  const text = await (await fetch(gw.metricsUrl!)).text();
  const line = text.split("\n").find((l) => l.startsWith("gateway_upstream_duration_seconds_count{") && l.includes(`provider="${provider}"`) && l.includes(`outcome="${outcome}"`));
  return line ? Number(line.split(" ").pop()) : 0;
}

describe("Google's 400 API_KEY_INVALID on the gateway's key", () => {
  it("the model's next endpoint serves, and the refused attempt counts as failed (outcome=error)", async () => {
    const before = await failedAttempts("gbadkey", "error");
    const r = await chat("google/badkey-then-ok");
    expect(r.status).toBe(200);
    expect(r.json.choices[0].message.content).toContain("Hello from the fake Gemini upstream");
    expect(keysSent()).toEqual(["AIza-revoked-key", FAKE_GEMINI_KEY]);
    expect(await failedAttempts("gbadkey", "error")).toBe(before + 1);
    expect(await failedAttempts("gbadkey", "client_error")).toBe(0);
  });

  it("with no other endpoint: a 502 the SDKs do not retry, naming Google's message, not 400 INVALID_REQUEST", async () => {
    const r = await chat("google/badkey");
    expect(r.status).toBe(502);
    expect(r.headers.get("x-should-retry")).toBe("false");
    expect(r.json.error).toMatchObject({ code: "UPSTREAM_ERROR", details: { upstream_status: 400 } });
    expect(r.json.error.message).toContain("API key not valid");
    expect(gem.requests).toHaveLength(1);
  });

  it("a Gemini-protocol client gets the gateway's FAILED_PRECONDITION (UPSTREAM_ERROR), not INVALID_ARGUMENT", async () => {
    const r = await generate("google/badkey");
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ status: "FAILED_PRECONDITION", details: [expect.objectContaining({ reason: "UPSTREAM_ERROR" })] });
  });
});

describe("Google's 400 FAILED_PRECONDITION (a location or billing it will not serve)", () => {
  it("the model's next endpoint serves", async () => {
    gem.failures.push({ ...LOCATION }); // the first endpoint's answer
    const r = await chat("google/badkey-then-ok");
    expect(r.status).toBe(200);
    expect(keysSent()).toEqual(["AIza-revoked-key", FAKE_GEMINI_KEY]);
  });

  it("with no other endpoint: a 502 the SDKs do not retry, naming Google's message", async () => {
    const before = await failedAttempts("gok", "error");
    gem.failures.push({ ...LOCATION });
    const r = await chat("google/ok-alone");
    expect(r.status).toBe(502);
    expect(r.headers.get("x-should-retry")).toBe("false");
    expect(r.json.error.message).toContain("User location is not supported");
    expect(gem.requests).toHaveLength(1);
    expect(await failedAttempts("gok", "error")).toBe(before + 1);
  });
});
