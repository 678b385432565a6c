// Gemini reports an overload that comes once a stream has begun as the stream's only frame: Google's error envelope
// (503 UNAVAILABLE) in a 200 SSE answer. Nothing was generated, so it is worth another try, unbilled — as before
// 18a554a made a stream's first token commit it: the Gemini relay took that error frame for the first token, and the
// overload became the client's final 502, billed the estimate of its input. The first token is the first event with
// content. On the shipped gateway.yaml, google/gemini-2.5-flash on the fake Gemini.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerRecordOf, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "./helpers/shipped-config.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";

const MODEL = "google/gemini-2.5-flash";
let gemini: FakeGemini;
let gw: TestGateway;

beforeAll(async () => {
  gemini = await startFakeGemini();
  const config = shippedConfig({ openai: "http://127.0.0.1:9", anthropic: "http://127.0.0.1:9" });
  config.providers.gemini.base_url = gemini.baseUrl;
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: FAKE_GEMINI_KEY } });
});

afterAll(async () => {
  await gw?.close();
  await gemini?.close();
});

const overloaded = { kind: "in-band", code: 503, rpcStatus: "UNAVAILABLE", message: "The model is overloaded. Please try again later." } as const;

describe("a Gemini stream whose only frame is an in-band overload", () => {
  it("is asked again and the client gets the second answer, the overload unbilled (Gemini client)", async () => {
    gemini.failures.push(overloaded);
    const before = gemini.requests.length;
    const res = await fetch(`${gw.url}/api/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": SHIPPED_KEY },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Say hello." }] }] }),
    });
    const text = await res.text();
    expect(gemini.requests.length - before).toBe(2);
    expect(res.status).toBe(200);
    expect(text).toContain('"parts"');
    expect(text).not.toContain("overloaded");
    const rec = await ledgerRecordOf(gw, res.headers.get("x-request-id"));
    expect(rec).toMatchObject({ attempts: 2, status: 200 });
  });

  it("is asked again for a chat client too", async () => {
    gemini.failures.push(overloaded);
    const before = gemini.requests.length;
    const res = await fetch(`${gw.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${SHIPPED_KEY}` },
      body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: "user", content: "Say hello." }] }),
    });
    const text = await res.text();
    expect(gemini.requests.length - before).toBe(2);
    expect(res.status).toBe(200);
    expect(text).toContain("data: [DONE]");
    expect(text).not.toContain("overloaded");
  });

  it("a stream with no content at all (a blocked prompt) is still recorded as streamed (its time to first token set)", async () => {
    gemini.failures.push({ kind: "prompt-blocked" });
    const res = await fetch(`${gw.url}/api/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": SHIPPED_KEY },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Say hello." }] }] }),
    });
    await res.text();
    const rec = await ledgerRecordOf(gw, res.headers.get("x-request-id"));
    expect(rec.ttftMs).not.toBeNull(); // the console tells streamed requests by it
  });
});
