// The provider's own id for a call reaches the client in x-mg-upstream-request-id, whatever the provider and the
// client protocol, on a success (JSON and streamed) and on an upstream error the gateway relays (the last attempt's):
// the id an operator quotes in a ticket with OpenAI, Anthropic or Google. The gateway as it ships, on fakes that
// send each provider's own header (OpenAI x-request-id, Anthropic request-id; Gemini none, its id being responseId).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestGateway } from "./helpers/gateway.ts";
import { startTestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "./helpers/shipped-config.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";

const HEADER = "x-mg-upstream-request-id";
const gpt = "openai/gpt-5-mini";
const claude = "anthropic/claude-sonnet-4.5";
const flash = "google/gemini-2.5-flash";

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let gw: TestGateway;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  gemini = await startFakeGemini();
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.providers.gemini.base_url = gemini.baseUrl;
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: FAKE_GEMINI_KEY } });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

const chat = (model: string, stream = false) => fetch(`${gw.url}/api/v1/chat/completions`, {
  method: "POST",
  headers: { authorization: `Bearer ${SHIPPED_KEY}`, "content-type": "application/json" },
  body: JSON.stringify({ model, stream, max_tokens: 50, messages: [{ role: "user", content: "Hi" }] }),
});

describe("an OpenAI upstream's x-request-id", () => {
  it("is on a chat client's JSON answer and stream", async () => {
    const json = await chat(gpt);
    expect(json.status).toBe(200);
    await json.json();
    expect(json.headers.get(HEADER)).toBe("req_fake_1");
    const stream = await chat(gpt, true);
    expect(stream.status).toBe(200);
    expect(stream.headers.get(HEADER)).toBe("req_fake_1");
    await stream.text();
  });

  it("is on a Messages client's answer translated from it", async () => {
    const res = await fetch(`${gw.url}/api/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": SHIPPED_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: gpt, max_tokens: 50, messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(res.status).toBe(200);
    await res.json();
    expect(res.headers.get(HEADER)).toBe("req_fake_1");
  });

  it("on a 500 the gateway relays, is the last attempt's", async () => {
    const before = openai.requests.length;
    for (let i = 1; i <= 6; i++) openai.failures.push({ kind: "status", status: 500, headers: { "x-request-id": `req_upstream_500_${i}` } });
    try {
      const res = await chat(gpt);
      const body = await res.json();
      expect(res.status).toBe(502);
      expect(body.error.code).toBe("UPSTREAM_ERROR");
      const attempts = openai.requests.length - before;
      expect(attempts).toBeGreaterThan(0);
      expect(res.headers.get(HEADER)).toBe(`req_upstream_500_${attempts}`);
    } finally {
      openai.failures.length = 0;
    }
  });

  it("on a request error (400) too, x-should-retry: false kept", async () => {
    openai.failures.push({ kind: "status", status: 400, headers: { "x-request-id": "req_upstream_400" } });
    try {
      const res = await chat(gpt);
      await res.json();
      expect(res.status).toBe(400);
      expect(res.headers.get(HEADER)).toBe("req_upstream_400");
      expect(res.headers.get("x-should-retry")).toBe("false");
    } finally {
      openai.failures.length = 0;
    }
  });
});

describe("an Anthropic upstream's request-id", () => {
  it("is on a chat client's answer, and on a 529 the gateway relays", async () => {
    const ok = await chat(claude);
    await ok.json();
    expect(ok.headers.get(HEADER)).toBe("req_fake_anthropic");
    for (let i = 0; i < 6; i++) anthropic.failures.push({ kind: "status", status: 529, type: "overloaded_error" });
    try {
      const res = await chat(claude);
      await res.json();
      expect(res.status).toBe(502);
      expect(res.headers.get(HEADER)).toBe("req_fake_anthropic");
    } finally {
      anthropic.failures.length = 0;
    }
  });
});

describe("a Gemini answer's id (Google sends no id header: its responseId)", () => {
  it("is on a Gemini client's JSON answer", async () => {
    const res = await fetch(`${gw.url}/api/v1beta/models/${flash}:generateContent`, {
      method: "POST",
      headers: { "x-goog-api-key": SHIPPED_KEY, "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] }),
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.responseId).toMatch(/^\w+$/);
    expect(res.headers.get(HEADER)).toBe(body.responseId);
  });

  it("is on a chat client's answer translated from it", async () => {
    const res = await chat(flash);
    expect(res.status).toBe(200);
    const body = await res.json();
    const id = res.headers.get(HEADER);
    expect(id).toMatch(/^\w+$/);
    expect(body.id).toBe(`chatcmpl-${id}`);
  });
});
