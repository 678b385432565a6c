// Inline media's cost is not bounded by its size (the audit: a $0.001 daily budget, a chat request with max_tokens 5
// and one 1x1 PNG as a data: URL, ~300 bytes of body; OpenAI bills a low-detail image 2833 tokens on gpt-4o-mini. It
// was admitted on a hold for its ~300 bytes and settled at 2.86 times the budget). A request carrying inline media now
// reserves input up to the context window, as media by URL does: a budget too small for that refuses it with a 402
// naming the inline media, a larger one holds at least what it settles at, and a text-only request holds its body's
// size as before. On the shipped gateway.yaml and catalog (openai/gpt-4o-mini: $0.15/M input, $0.60/M output, 128k).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { keyEntry, ledgerRecordOf, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_LIMITS } from "./helpers/shipped-config.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { toPico } from "../core/money/money.ts";

const TINY = testKey("media-tiny");
const ROOMY = testKey("media-roomy");
/** What OpenAI bills one low-detail image on gpt-4o-mini (2833), plus the question. */
const PROMPT_TOKENS = 2850;
const INPUT_PICO = toPico("0.00000015");
const OUTPUT_PICO = toPico("0.0000006");
/** A 1x1 PNG. */
const PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;
/** An answer the upstream holds back until the test has looked at the hold (set by `arrival`; else it answers at once). */
let arrived: ((release: () => void) => void) | undefined;
const arrival = () => new Promise<() => void>((resolve) => (arrived = resolve));

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  // Bills what OpenAI bills (the image's tokens, not its bytes), once the test lets it answer.
  openai.hook = (req, res: ServerResponse) => {
    const answer = () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        id: "chatcmpl-pixel", object: "chat.completion", created: 0, model: req.body.model,
        choices: [{ index: 0, message: { role: "assistant", content: "Red." }, finish_reason: "stop" }],
        usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: 5, total_tokens: PROMPT_TOKENS + 5 },
      }));
    };
    if (arrived) arrived(answer);
    else answer();
    arrived = undefined;
    return true;
  };
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.projects.tiny = { keys: [keyEntry("tiny", TINY)], budget: { usd: "0.001", period: "total" }, rate_limits: SHIPPED_LIMITS };
  config.projects.roomy = { keys: [keyEntry("roomy", ROOMY)], budget: { usd: "1", period: "total" }, rate_limits: SHIPPED_LIMITS };
  gw = await startTestGateway(config, { env: providerEnv(config) });
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await anthropic?.close();
});

const chat = (content: unknown) => ({ model: "openai/gpt-4o-mini", max_tokens: 5, messages: [{ role: "user", content }] });
const pixel = chat([{ type: "text", text: "What colour is this pixel?" }, { type: "image_url", image_url: { url: PIXEL, detail: "low" } }]);

/** Sends `body` and, while the upstream holds its answer, reads what the project's budget holds for it. */
async function heldFor(project: string, key: string, body: unknown) {
  const upstream = arrival();
  const answer = postJson(`${gw.baseURL}/chat/completions`, body, { authorization: `Bearer ${key}` });
  const release = await Promise.race([upstream, answer.then((r) => Promise.reject(new Error(`answered ${r.status} before the upstream was called: ${r.text}`)))]);
  const held = await gw.gateway.store.reserved(project, "total", Date.now());
  release();
  const r = await answer;
  expect(r.status).toBe(200);
  return { held, r };
}

describe("a budgeted request carrying an inline image", () => {
  it("on a $0.001 budget is refused with a 402 naming the inline media, before the upstream is called", async () => {
    const before = openai.requests.length;
    const r = await postJson(`${gw.baseURL}/chat/completions`, pixel, { authorization: `Bearer ${TINY}` });
    expect(r.status).toBe(402);
    expect(r.json.error.code).toBe("BUDGET_EXCEEDED");
    expect(r.json.error.details).toMatchObject({ reason: "request_input_over_available", reserved_input: ["inline_media"], budget_usd: "0.001" });
    expect(r.json.error.message).toContain(": it carries inline media (base64 images, audio or documents, billed by what they show, not by their size), so its input is reserved up to the model's context window; raise the budget");
    // 128k tokens of input at $0.15/M.
    expect(Number(r.json.error.details.input_max_usd)).toBeGreaterThanOrEqual(0.0192);
    expect(openai.requests.length).toBe(before);
    expect(await gw.gateway.store.spent("tiny", "total", 0)).toBe(0n);
  });

  it("on a larger budget holds at least what it settles at", async () => {
    const { held, r } = await heldFor("roomy", ROOMY, pixel);
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.inputTokens).toBe(PROMPT_TOKENS);
    const cost = toPico(record.costUsd);
    expect(cost).toBe(BigInt(PROMPT_TOKENS) * INPUT_PICO + 5n * OUTPUT_PICO); // $0.0004305
    expect(held).toBeGreaterThanOrEqual(cost);
    expect(held).toBeGreaterThanOrEqual(128_000n * INPUT_PICO);
  });
});

describe("a budgeted text-only request", () => {
  it("still holds its body's size of input, and fits a $0.001 budget", async () => {
    const body = chat("What colour is a pixel of a red square? Answer in one word, please, and nothing else.");
    const { held } = await heldFor("tiny", TINY, body);
    expect(held).toBe(BigInt(JSON.stringify(body).length) * INPUT_PICO + 5n * OUTPUT_PICO);
  });
});
