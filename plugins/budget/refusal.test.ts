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
    // openai/gpt-4o: $0.00002 per output token, 100 at most, and $0.00001 per input token: a short request's worst
    // case is ~$0.003 (~$0.001 of it input), over the $0.002 budget, which fewer output tokens would fit.
    gw = await startTestGateway(policyConfig(fake.baseUrl, { acme: { budget: { usd: "0.002", period: "month" } }, other: { budget: { usd: "0.001", period: "month" } } }));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  const tooLarge = (hint: string) =>
    new RegExp(`^Project "acme" has \\$0\\.002 left of its monthly budget of \\$0\\.002 \\(spent \\$0\\.00\\), less than this request may cost \\(\\$(0\\.00\\d+) at most\\): ${hint.replace(/[.()]/g, "\\$&")} or raise the budget$`);

  /** The refusal's message and details, after checking what every such refusal carries. */
  function refusal(r: { status: number; json: any; headers: Headers }, hint: string) {
    expect(r.status).toBe(402);
    const { message, details } = r.json.error;
    expect(message).toMatch(tooLarge(hint));
    expect(message).not.toContain("has reached");
    expect(details).toMatchObject({ project: "acme", budget_usd: "0.002", spent_usd: "0", available_usd: "0.002", reason: "request_max_over_available" });
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

  // The review: a request whose worst case is almost all reserved input (a Responses continuation reserving up to the
  // context window, media by URL) was told "lower max_tokens" even at max_tokens 1, which cannot make it fit. It is
  // told what the input is and to raise the budget, with a reason of its own; the output field is named only when
  // lowering it could make the request fit.
  /** The refusal of a request whose input alone is over what is left; returns its message. */
  function inputRefusal(r: { status: number; json: any; headers: Headers }, field: string, why: RegExp, advice: string) {
    expect(r.status).toBe(402);
    const { message, details } = r.json.error;
    expect(details).toMatchObject({ project: "acme", available_usd: "0.002", reason: "request_input_over_available" });
    expect(message).toMatch(/^Project "acme" has \$0\.002 left of its monthly budget of \$0\.002 \(spent \$0\.00\), less than this request may cost \(\$[\d.]+ at most(, \d+ model calls: [^)]*)?\)/);
    expect(message).toContain(`($${details.request_max_usd} at most`);
    expect(message).toContain(`$${details.input_max_usd} of it for input`);
    expect(Number(details.input_max_usd)).toBeGreaterThanOrEqual(Number(details.available_usd));
    expect(message).toMatch(why);
    expect(message).not.toContain(field);
    expect(message.endsWith(advice)).toBe(true);
    expect(r.headers.get("x-should-retry")).toBeNull();
    return message as string;
  }

  it("a Responses continuation at max_output_tokens 16: told its previous turns are reserved, not to lower max_output_tokens", async () => {
    const body = { model: "openai/gpt-4o", previous_response_id: "resp_earlier", input: "And then?", max_output_tokens: 16 };
    const r = await postJson(`${gw.baseURL}/responses`, body, auth());
    inputRefusal(r, "max_output_tokens", /: it continues a stored conversation \(previous_response_id\), so its input is reserved up to the model's context window; /, "raise the budget");
    expect(r.json.error.details.reserved_input).toEqual(["stored_conversation"]);
  });

  it("chat naming an image by URL at max_tokens 1: told the media is reserved, not to lower max_tokens", async () => {
    const body = chat("openai/gpt-4o", { max_tokens: 1, messages: [{ role: "user", content: [{ type: "text", text: "What is it?" }, { type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }] });
    const r = await postJson(`${gw.baseURL}/chat/completions`, body, auth());
    inputRefusal(r, "max_tokens", /: it names media or files the upstream fetches by URL or file id, so its input is reserved up to the model's context window; /, "raise the budget");
    expect(r.json.error.details.reserved_input).toEqual(["media_by_reference"]);
  });

  it("chat carrying a data: image at max_tokens 1: told the inline media is reserved, not to lower max_tokens", async () => {
    const pixel = { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" } };
    const body = chat("openai/gpt-4o", { max_tokens: 1, messages: [{ role: "user", content: [{ type: "text", text: "What is it?" }, pixel] }] });
    const r = await postJson(`${gw.baseURL}/chat/completions`, body, auth());
    inputRefusal(r, "max_tokens", /: it carries inline media \(base64 images, audio or documents, billed by what they show, not by their size\), so its input is reserved up to the model's context window; /, "raise the budget");
    expect(r.json.error.details.reserved_input).toEqual(["inline_media"]);
  });

  it("a Responses request with a server tool: told its results are reserved as input, for each call, and how to reserve fewer", async () => {
    const body = { model: "openai/gpt-4o", input: "Look it up", tools: [{ type: "web_search" }], max_output_tokens: 16 };
    const r = await postJson(`${gw.baseURL}/responses`, body, auth());
    const message = inputRefusal(r, "max_output_tokens", /: it enables server tools \(their results count as input\), so its input is reserved up to the model's context window for each model call; /,
      "set a smaller max_tool_calls (fewer calls, less reserved) or raise the budget");
    // Sent with max_tool_calls 10 (budgeted, it stated none): the first call and one for each.
    expect(message).toContain(" at most, 11 model calls: one more for each call of its server tools it allows)");
    expect(r.json.error.details.reserved_input).toEqual(["server_tools"]);
  });

  it("a long message at max_tokens 1: told to send less input", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, chat("openai/gpt-4o", { max_tokens: 1, messages: [{ role: "user", content: "word ".repeat(100) }] }), auth());
    inputRefusal(r, "max_tokens", /\$[\d.]+ of it for input: send less input/, "send less input or raise the budget");
    expect(r.json.error.details.reserved_input).toEqual(["request_body"]);
  });

  it("still names the output field when lowering it could make the request fit, though the input is reserved too", async () => {
    // gpt-4o-mini: input up to the context window is $0.001 (1000 x $0.000001), under the $0.0011 left; its 100 output
    // tokens at most ($0.0002: a translated request's limit is at most the model's max_tokens) put the request over
    // it, so fewer would fit.
    const roomy = await startTestGateway(policyConfig(fake.baseUrl, { acme: { budget: { usd: "0.0011", period: "month" } } }));
    try {
      const body = { model: "openai/gpt-4o-mini", previous_response_id: "resp_earlier", input: "And then?", max_output_tokens: 100 };
      const r = await postJson(`${roomy.baseURL}/responses`, body, auth());
      expect(r.status).toBe(402);
      expect(r.json.error.details.reason).toBe("request_max_over_available");
      expect(r.json.error.message).toMatch(/: lower max_output_tokens or raise the budget$/);
    } finally {
      await roomy.close();
    }
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

describe("a budget refusal of a Responses request with an mcp tool", () => {
  it("says the amount covers every model turn the loop may make", async () => {
    const { budgetRefusal } = await import("./refusal.ts");
    const e = budgetRefusal({
      project: "acme", usd: "0.002", period: "month", periodStart: Date.UTC(2025, 0, 1), limitPico: toPico("0.002"), spentPico: 0n, reservedPico: 0n,
      amountPico: toPico("0.006"), withoutOutputPico: toPico("0.0006"), modelTurns: 3,
    }, { endpoint: "responses", body: { max_output_tokens: 100, tools: [{ type: "mcp", server_label: "docs" }] } });
    expect(e.message).toContain("less than this request may cost ($0.006 at most, 3 model turns of its mcp tool (mcp.max_tool_rounds)): lower max_output_tokens");
  });
});
