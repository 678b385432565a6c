// The Gemini API's method is in the URL (:generateContent answers JSON, :streamGenerateContent?alt=sse events); its
// request has no `stream` field, and Gemini refuses one as an unknown name. A client-sent `stream` must not turn
// :generateContent into a stream (nor reach an upstream's stream method): it is Gemini's 400, naming the field.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("gemini-stream-field");
const pricing = { input: "0.000001", output: "0.000002" };
let gemini: FakeGemini;
let openai: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  gemini = await startFakeGemini();
  openai = await startFakeOpenAI();
  gw = await startTestGateway({
    providers: {
      gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
      oai: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
    },
    models: {
      "google/gem": { type: "language", endpoints: [{ provider: "gem", model: "gemini-test", pricing }] },
      "openai/gpt": { type: "language", endpoints: [{ provider: "oai", model: "gpt-test", pricing }] },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await gemini?.close();
  await openai?.close();
});

const call = (model: string, method: string, body: unknown) =>
  fetch(`${gw.url}/api/v1beta/models/${model}:${method}`, { method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": KEY }, body: JSON.stringify(body) });
const hi = { contents: [{ role: "user", parts: [{ text: "Hi" }] }] };

describe("a `stream` field in a Gemini request", () => {
  it.each(["google/gem", "openai/gpt"])("%s: :generateContent with stream true is a 400 naming it; no upstream is called", async (model) => {
    const before = gemini.requests.length + openai.requests.length;
    for (const [method, stream] of [["generateContent", true], ["generateContent", false], ["streamGenerateContent?alt=sse", true]] as const) {
      const res = await call(model, method, { ...hi, stream });
      expect(res.status, `${method} stream: ${stream}`).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      const err = (await res.json()).error;
      expect(err.status).toBe("INVALID_ARGUMENT");
      expect(err.details).toContainEqual(expect.objectContaining({ fieldViolations: [expect.objectContaining({ field: "stream" })] }));
    }
    expect(gemini.requests.length + openai.requests.length).toBe(before);
    // Without it, the URL's method decides.
    const json = await call(model, "generateContent", hi);
    expect(json.headers.get("content-type")).toMatch(/^application\/json/);
    expect((await json.json()).candidates[0].finishReason).toBe("STOP");
  });
});
