// count_tokens (Messages /count_tokens, Gemini :countTokens) costs one request and zero tokens (docs/messages.md), so a
// token window in debt never refuses it (the audit: a chat request whose real usage, 4005 tokens, put tpm 3000 in
// debt; count_tokens was then 429 "Rate limit reached (limit)" with 4 requests left). And a 429 always names the
// window that refused it. On the in-process windows (memory, as SQLite) and on Redis's script.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ulid } from "ulid";
import { startTestGateway, postJson, keyEntry, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";
import { KEY, auth, chat, policyConfig } from "../../test/helpers/policy-config.ts";

const model = "openai/gpt-4o-mini";
const messages = [{ role: "user", content: "How many tokens is this?" }];

describe.each(["memory", "redis"])("%s store: a zero-token request and a token window in debt", (kind) => {
  let fake: FakeOpenAI;
  let redis: TestRedis | undefined;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    // Every chat answer reports 950 tokens used (within the model's context window): more than the key's whole tpm window.
    fake.hook = (req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        id: "chatcmpl-big", object: "chat.completion", created: 0, model: req.body.model,
        choices: [{ index: 0, message: { role: "assistant", content: "A" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 900, completion_tokens: 50, total_tokens: 950 },
      }));
      return true;
    };
    if (kind === "redis") redis = await startRedis();
    const store = redis ? { kind: "redis", url: redis.url, prefix: `mg-${ulid()}:` } : { kind: "memory" };
    gw = await startTestGateway(policyConfig(fake.baseUrl, { store, acme: { keys: [keyEntry("k1", KEY, { rate_limits: { rpm: 5, tpm: 500 } })] } }));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await redis?.stop();
  });

  it("count_tokens passes (one request, no tokens); the next generation is refused naming tpm, then rpm runs out naming rpm", async () => {
    const big = await postJson(`${gw.baseURL}/chat/completions`, chat(model), auth());
    expect(big.status).toBe(200);
    expect(big.headers.get("x-ratelimit-remaining-tokens")).toBe("0");

    const count = await postJson(`${gw.baseURL}/messages/count_tokens`, { model, messages }, auth());
    expect(count.status, count.text).toBe(200);
    expect(count.json.input_tokens).toBeGreaterThan(0);
    expect(count.headers.get("x-ratelimit-remaining-requests")).toBe("3");
    expect(count.headers.get("x-ratelimit-remaining-tokens")).toBe("0"); // still in debt: nothing charged, nothing given

    const gemini = await postJson(`${gw.url}/api/v1beta/models/${model}:countTokens`, { contents: [{ role: "user", parts: [{ text: "Hi" }] }] },
      { "x-goog-api-key": KEY });
    expect(gemini.status, gemini.text).toBe(200);
    expect(gemini.json.totalTokens).toBeGreaterThan(0);
    expect(gemini.headers.get("x-ratelimit-remaining-requests")).toBe("2");

    const refused = await postJson(`${gw.baseURL}/chat/completions`, chat(model), auth());
    expect(refused.status).toBe(429);
    expect(refused.json.error.message).toMatch(/^Rate limit reached \(tpm\); retry after \d+s$/);

    // The two requests left, then rpm refuses a count_tokens, saying so.
    for (let i = 0; i < 2; i++) expect((await postJson(`${gw.baseURL}/messages/count_tokens`, { model, messages }, auth())).status).toBe(200);
    const noRequests = await postJson(`${gw.baseURL}/messages/count_tokens`, { model, messages }, auth());
    expect(noRequests.status).toBe(429);
    expect(noRequests.json.error.message).toMatch(/^Rate limit reached \(rpm\); retry after \d+s$/);
  });
});
