// A request refused because its own worst case does not fit in what is left of a budget is not told the budget "has
// reached" its cap (the audit: $0.005 budget, $0.0000135 spent, a max_tokens whose worst case was $0.0098): it is told
// how much is left, how much it may cost, and which field of its own protocol to lower. A budget the spend has used
// up still says "has reached".
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, OTHER, policyConfig } from "../../test/helpers/policy-config.ts";
import { toPico } from "../../core/money/money.ts";

describe("a budget refusal", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    // openai/gpt-4o: $0.00002 per output token, 100 at most: a request's worst case is ~$0.003, three times the budget.
    gw = await startTestGateway(policyConfig(fake.baseUrl, { acme: { budget: { usd: "0.001", period: "month" } }, other: { budget: { usd: "0.001", period: "month" } } }));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  const tooLarge = (hint: string) =>
    new RegExp(`^Project "acme" has \\$0\\.001 left of its monthly budget of \\$0\\.001 \\(spent \\$0\\), less than this request may cost \\(\\$(0\\.00\\d+) at most\\): ${hint.replace(/[.()]/g, "\\$&")} or raise the budget$`);

  /** The refusal's message and details, after checking what every such refusal carries. */
  function refusal(r: { status: number; json: any; headers: Headers }, hint: string) {
    expect(r.status).toBe(402);
    const { message, details } = r.json.error;
    expect(message).toMatch(tooLarge(hint));
    expect(message).not.toContain("has reached");
    expect(details).toMatchObject({ project: "acme", budget_usd: "0.001", spent_usd: "0", available_usd: "0.001", reason: "request_max_over_available" });
    expect(message).toContain(`($${details.request_max_usd} at most)`);
    expect(r.headers.get("x-should-retry")).toBeNull(); // asking again for as much never fits
    return r;
  }

  it("on chat names the max_tokens the client sent", async () => {
    refusal(await postJson(`${gw.baseURL}/chat/completions`, chat("openai/gpt-4o", { max_tokens: 100 }), auth()), "lower max_tokens");
  });

  it("on chat names max_completion_tokens when that is what the client sent", async () => {
    const { max_tokens: _, ...body } = chat("openai/gpt-4o", { max_completion_tokens: 100 });
    refusal(await postJson(`${gw.baseURL}/chat/completions`, body, auth()), "lower max_completion_tokens");
  });

  it("on chat without an output limit says to set one", async () => {
    const { max_tokens: _, ...body } = chat("openai/gpt-4o");
    refusal(await postJson(`${gw.baseURL}/chat/completions`, body, auth()), "set max_tokens (without it the model's largest output is reserved)");
  });

  it("on the Responses API names max_output_tokens", async () => {
    const body = { model: "openai/gpt-4o", input: "Hello there", max_output_tokens: 100 };
    refusal(await postJson(`${gw.baseURL}/responses`, body, auth()), "lower max_output_tokens");
  });

  it("on the Messages API names max_tokens", async () => {
    const body = { model: "openai/gpt-4o", max_tokens: 100, messages: [{ role: "user", content: "Hello there" }] };
    refusal(await postJson(`${gw.baseURL}/messages`, body, auth()), "lower max_tokens");
  });

  it("on the Gemini API names generationConfig.maxOutputTokens", async () => {
    const body = { contents: [{ role: "user", parts: [{ text: "Hello there" }] }], generationConfig: { maxOutputTokens: 100 } };
    const r = await postJson(`${gw.url}/api/v1beta/models/openai/gpt-4o:generateContent`, body, auth());
    expect(r.status).toBe(402);
    expect(r.json.error.message).toMatch(tooLarge("lower generationConfig.maxOutputTokens"));
  });

  it("still says the budget has been reached once the spend has used it up", async () => {
    await gw.gateway.store.record({
      generationId: `gen_seed_${Date.now()}`, requestId: "seed", ts: Date.now(), keyId: "k2", project: "other", endpoint: "chat",
      model: "openai/gpt-4o", provider: "up", attempts: 1, inputTokens: 100, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0,
      reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0, costUsd: "0.001", costPico: toPico("0.001"), latencyMs: 1,
      ttftMs: null, status: 200, outcome: "ok", sandbox: false, estimated: false,
    });
    const r = await postJson(`${gw.baseURL}/chat/completions`, chat("openai/gpt-4o-mini", { max_tokens: 1 }), auth(OTHER));
    expect(r.status).toBe(402);
    expect(r.json.error.message).toMatch(/^Project "other" has reached its monthly budget of \$0\.001 \(spent \$0\.001,/);
    expect(r.json.error.details).toMatchObject({ available_usd: "0" });
    expect(r.json.error.details.reason).toBeUndefined();
  });
});
