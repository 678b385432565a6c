// Refused keys and retries: a 401 no retry can pass (missing, malformed, unknown, revoked or expired key) says
// x-should-retry: false, so Claude Code (which retries every 401 without it, for minutes) gives up at once; a key the
// store could not be asked about (store down) is refused without it, as a later try may pass.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, postJson, keyEntry, testKey, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";
import { chat, OTHER, policyConfig } from "../../test/helpers/policy-config.ts";

const REVOKED = testKey("revoked");
const EXPIRED = testKey("expired");
const UNKNOWN = testKey("neverissued");

/** Claude Code's request: POST /v1/messages with x-api-key. */
const messages = (gw: TestGateway, key: string) =>
  postJson(`${gw.url}/api/v1/messages`, { model: "anthropic/claude-x", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }, { "x-api-key": key, "anthropic-version": "2023-06-01" });

describe("a key no retry can make valid", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    const config = policyConfig(fake.baseUrl);
    config.projects.other.keys.push(keyEntry("r", REVOKED, { revoked: true }), keyEntry("e", EXPIRED, { expires_at: "2020-01-01T00:00:00Z" }));
    gw = await startTestGateway(config);
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  const cases: [string, Record<string, string>, string][] = [
    ["missing", {}, "INVALID_API_KEY"],
    ["malformed", { authorization: "Bearer sk-not-a-gateway-key" }, "INVALID_API_KEY"],
    ["unknown", { authorization: `Bearer ${UNKNOWN}` }, "INVALID_API_KEY"],
    ["revoked", { authorization: `Bearer ${REVOKED}` }, "INVALID_API_KEY"],
    ["expired", { authorization: `Bearer ${EXPIRED}` }, "EXPIRED_API_KEY"],
  ];
  for (const [what, headers, code] of cases) {
    it(`a ${what} key: 401 ${code} with x-should-retry: false`, async () => {
      const r = await postJson(`${gw.baseURL}/chat/completions`, chat(), headers);
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe(code);
      expect(r.headers.get("x-should-retry")).toBe("false");
    });
  }

  it("Claude Code's Messages requests with a revoked, expired or unknown key say it too (it stops retrying)", async () => {
    for (const key of [REVOKED, EXPIRED, UNKNOWN]) {
      const r = await messages(gw, key);
      expect(r.status).toBe(401);
      expect(r.json.type).toBe("error");
      expect(r.headers.get("x-should-retry")).toBe("false");
    }
  });

  // Each protocol's clients put the key in their own header: the hint names the one they can set.
  it("a chat or Responses request without a key is told to send Authorization: Bearer", async () => {
    for (const r of [await postJson(`${gw.baseURL}/chat/completions`, chat(), {}), await postJson(`${gw.baseURL}/responses`, { model: "openai/gpt-4o-mini", input: "hi" }, {})]) {
      expect(r.status).toBe(401);
      expect(r.json.error.message).toBe("Missing API key: send Authorization: Bearer mg_live_…");
    }
  });

  it("a Messages request without a key is told to send x-api-key, as the Anthropic SDK and Claude Code do", async () => {
    const r = await postJson(`${gw.url}/api/v1/messages`, { model: "anthropic/claude-x", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }, { "anthropic-version": "2023-06-01" });
    expect(r.status).toBe(401);
    expect(r.json.error).toMatchObject({ type: "authentication_error", message: "Missing API key: send the mg_live_… key in x-api-key (or Authorization: Bearer)" });
  });

  // The catalog answers an anthropic-version client in Anthropic's envelope (the SDK's models.list, Claude Code's model
  // discovery): its hint is the Messages one; an OpenAI SDK's models.list still gets the Bearer one.
  it("the Anthropic SDK's models.list without a key is told to send x-api-key; the OpenAI SDK's, Authorization: Bearer", async () => {
    const anthropic = await fetch(`${gw.url}/api/v1/models`, { headers: { "anthropic-version": "2023-06-01" } });
    expect(anthropic.status).toBe(401);
    expect(await anthropic.json()).toMatchObject({ type: "error", error: { type: "authentication_error", message: "Missing API key: send the mg_live_… key in x-api-key (or Authorization: Bearer)" } });
    const openai = await fetch(`${gw.url}/api/v1/models`);
    expect(openai.status).toBe(401);
    expect((await openai.json()).error.message).toBe("Missing API key: send Authorization: Bearer mg_live_…");
  });

  it("a Gemini request without a key is told to send x-goog-api-key or ?key=, as the Gemini SDKs and REST examples do", async () => {
    const r = await postJson(`${gw.url}/api/v1beta/models/x/y:generateContent`, { contents: [{ role: "user", parts: [{ text: "hi" }] }] }, {});
    expect(r.status).toBe(401);
    expect(r.json.error).toMatchObject({ status: "UNAUTHENTICATED", message: "Missing API key: send the mg_live_… key in x-goog-api-key or ?key=" });
  });

  // Spec, Authentication 4 and Errors: rerank's own UNAUTHORIZED is for a missing or invalid key; an expired one is
  // EXPIRED_API_KEY there too, so a client can tell "renew the key" from "wrong key".
  it("rerank names an expired key EXPIRED_API_KEY and a missing, malformed, unknown or revoked one UNAUTHORIZED", async () => {
    const rerank = (headers: Record<string, string>) => postJson(`${gw.baseURL}/rerank`, { model: "sim/ranker", query: "q", documents: ["a"] }, headers);
    const expired = await rerank({ authorization: `Bearer ${EXPIRED}` });
    expect(expired.status).toBe(401);
    expect(expired.json.error).toMatchObject({ code: "EXPIRED_API_KEY", type: "authentication_error" });
    expect(expired.headers.get("x-should-retry")).toBe("false");
    for (const [, headers] of cases.filter(([what]) => what !== "expired")) {
      const r = await rerank(headers);
      expect(r.status).toBe(401);
      expect(r.json.error).toMatchObject({ code: "UNAUTHORIZED", type: "authentication_error" });
    }
  });

  it("a valid key's answer does not say it", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, chat(), { authorization: `Bearer ${OTHER}` });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-should-retry")).toBeNull();
  });
});

describe("a key the store could not be asked about", () => {
  let fake: FakeOpenAI;
  let redis: TestRedis;
  let gw: TestGateway;
  beforeAll(async () => {
    redis = await startRedis();
    fake = await startFakeOpenAI();
    gw = await startTestGateway(policyConfig(fake.baseUrl, { store: { kind: "redis", url: redis.url, timeout_ms: 250 } }));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await redis?.stop();
  });

  it("is refused for good while the store answers, and while it is down without x-should-retry: false", async () => {
    // Up: the store says there is no such key.
    const known = await messages(gw, UNKNOWN);
    expect(known.status).toBe(401);
    expect(known.headers.get("x-should-retry")).toBe("false");

    await redis.kill();
    // Perhaps a key created on another replica: only the store could tell. Twice: the failed lookup, remembered for a
    // second, proves nothing either.
    for (const key of [testKey("createdelsewhere"), testKey("createdelsewhere")]) {
      const r = await messages(gw, key);
      expect(r.status).toBe(401);
      expect(r.headers.get("x-should-retry")).toBeNull();
    }
  });
});
