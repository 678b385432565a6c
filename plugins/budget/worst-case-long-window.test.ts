// A budget's hold for Claude Sonnet 4 / 4.5 as the catalog ships them: a 200k window, 1M only for a request that asks
// for it (anthropic-beta context-1m-*) and gets the ask to the upstream (a Messages client on an Anthropic-protocol
// endpoint). A request without it cannot use more than 200k, so it is not held at 1M tokens at the tier's prices.
import { describe, expect, it } from "vitest";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import { picoToUsd } from "../../core/money/money.ts";
import { worstCase } from "./worst-case.ts";

// The catalog's Sonnet 4.5 prices: the dearest input is the 1-hour write, $6 per million, $12 over 200k.
const SONNET = {
  input: "0.000003", output: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375", input_cache_write_1h: "0.000006", web_search: "0.01",
  long_context: { above_input_tokens: 200_000, input: "0.000006", output: "0.0000225", input_cache_read: "0.0000006", input_cache_write: "0.0000075", input_cache_write_1h: "0.000012", context_window: 1_000_000 },
};
const send = async () => ({ kind: "json" as const, body: {} });
// Anthropic's API speaks Messages; an OpenAI-protocol host of the same model would get a translated body (no header).
// The Anthropic driver says its call carries the beta when the client's header (handed over natively) names it.
const opens = (_t: unknown, sent: { clientHeaders: Record<string, unknown> }) => /context-1m-/.test(String(sent.clientHeaders["anthropic-beta"] ?? ""));
const drivers = new Map<string, unknown>([["anthropic", { name: "anthropic", protocol: "anthropic", messages: send, opensLongContext: opens }], ["openai", { name: "openai", protocol: "openai", chat: send }]]);

function ctx(endpoint: string, body: Record<string, unknown>, headers: Record<string, string>, provider = "anthropic"): GatewayContext {
  const ep = { provider, upstreamModel: "claude-sonnet-4-5-20250929", pricing: SONNET, maxTokens: 64_000, contextWindow: 200_000 };
  const models = new Map<string, unknown>([["anthropic/claude-sonnet-4.5", { id: "anthropic/claude-sonnet-4.5", type: "language", config: {}, endpoints: [ep] }]]);
  const content = JSON.stringify(body).length;
  return { endpoint, body, headers: { "content-length": String(content), ...headers }, config: { models, raw: {} }, drivers } as unknown as GatewayContext;
}

const model = "anthropic/claude-sonnet-4.5";
// An image by URL: the input is fetched, so only the window bounds it.
const imageByUrl = { model, max_tokens: 100, messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/cat.png" } }] }] };
const BETA = { "anthropic-beta": "context-1m-2025-08-07" };
const held = (c: GatewayContext) => picoToUsd(worstCase(c).pico);

describe("the budget's hold on a Sonnet endpoint with a 1M long context", () => {
  it("without the beta: input up to the 200k window at the base prices ($3 of budget takes it)", () => {
    // 200000 x 6e-6 + 100 x 1.5e-5
    expect(held(ctx("messages", imageByUrl, {}))).toBe("1.2015");
  });

  it("a Messages client with the beta, to an Anthropic-protocol endpoint: up to 1M at the tier's prices", () => {
    // 1000000 x 1.2e-5 + 100 x 2.25e-5
    expect(held(ctx("messages", imageByUrl, BETA))).toBe("12.00225");
    expect(held(ctx("messages", imageByUrl, { "anthropic-beta": "files-api-2025-04-14, context-1m-2025-08-07" }))).toBe("12.00225");
  });

  it("the beta where it never reaches the upstream (a translated call): the 200k window", () => {
    expect(held(ctx("messages", imageByUrl, BETA, "openai"))).toBe("1.2015");
    const chat = { model, max_tokens: 100, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }] };
    expect(held(ctx("chat", chat, BETA))).toBe("1.2015");
  });

  it("a body over 200 KB without the beta: capped at the 200k window, at the base prices", () => {
    const big = { model, max_tokens: 100, messages: [{ role: "user", content: "y".repeat(300_000) }] };
    expect(held(ctx("messages", big, {}))).toBe("1.2015");
    // With the beta, its size (one token per byte at most) at the tier's.
    const bytes = JSON.stringify(big).length;
    expect(held(ctx("messages", big, BETA))).toBe(picoToUsd(BigInt(bytes) * 12_000_000n + 100n * 22_500_000n));
  });
});
