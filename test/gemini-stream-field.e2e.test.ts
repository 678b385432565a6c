// The Gemini API's method is in the URL (:generateContent answers JSON, :streamGenerateContent?alt=sse events); its
// request has no `stream` field, and Gemini refuses one as an unknown name. A client-sent `stream` must not turn
// :generateContent into a stream (nor reach an upstream's stream method): it is Gemini's 400, naming the field.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeGemini } from "./upstreams/gemini.ts";
import type { FakeOpenAI } from "./upstreams/openai.ts";
import { testKey, type TestGateway } from "./helpers/gateway.ts";
import { startGeminiOpenAIGateway, type GeminiOpenAIGateway } from "./helpers/gemini-openai-gateway.ts";

const KEY = testKey("gemini-stream-field");
let gemini: FakeGemini;
let openai: FakeOpenAI;
let gw: TestGateway;
let setup: GeminiOpenAIGateway | undefined;

beforeAll(async () => {
  setup = await startGeminiOpenAIGateway(KEY);
  ({ gw, gemini, openai } = setup);
});

afterAll(async () => {
  await setup?.close();
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
