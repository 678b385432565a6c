// Issue 25, item 9: an answer whose upstream sends no usage was billed one token per stream event (6 900 characters
// as 12 tokens) and a JSON answer not at all. Every relay path — chat, messages and responses clients; native and
// translated; streamed and JSON — now bills the text it relayed with the gateway's estimate (which errs high) and
// marks the ledger record `estimated`. The gateway runs as shipped (SQLite, full pipeline, OTLP on).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { startHostileGateway, type HostileGateway } from "./helpers/hostile-gateway.ts";
import { NO_USAGE_TEXT } from "./upstreams/hostile-stream.ts";
import { estimateTokens } from "../core/metering/estimate-tokens.ts";

let gw: HostileGateway;
beforeAll(async () => {
  gw = await startHostileGateway();
}, 60_000);
afterAll(async () => {
  await gw?.close();
});

const PATHS = { chat: "/chat/completions", messages: "/messages", responses: "/responses" } as const;
const BODIES = {
  chat: (model: string, stream: boolean) => ({ model, stream, messages: [{ role: "user", content: "Tell me a long story." }] }),
  messages: (model: string, stream: boolean) => ({ model, stream, max_tokens: 4096, messages: [{ role: "user", content: "Tell me a long story." }] }),
  responses: (model: string, stream: boolean) => ({ model, stream, input: "Tell me a long story." }),
};

let n = 0;
/** One request to completion; its ledger record. */
async function billed(client: keyof typeof PATHS, model: string, stream: boolean) {
  const requestId = `req-estimate-${++n}`;
  const res = await fetch(`${gw.baseURL}${PATHS[client]}`, {
    method: "POST", headers: { ...gw.headers(requestId), "anthropic-version": "2023-06-01" }, body: JSON.stringify(BODIES[client](model, stream)),
  });
  const text = await res.text();
  expect(res.status, text.slice(0, 300)).toBe(200);
  expect(text).toContain(NO_USAGE_TEXT.slice(0, 40));
  const row = await gw.ledger(requestId);
  expect(row, `ledger record of ${requestId}`).toBeDefined();
  return row!;
}

/** What the gateway's estimate says the text costs, and what o200k_base says: the bill must not be below either. */
const ESTIMATE = estimateTokens(NO_USAGE_TEXT);
const BPE = countTokens(NO_USAGE_TEXT);

function expectEstimated(row: Record<string, any>) {
  expect(row.estimated).toBe(1);
  expect(row.outcome).toBe("ok");
  expect(row.output_tokens).toBeGreaterThanOrEqual(Math.max(ESTIMATE, BPE));
  // A word cut between two events is counted twice at most: 12 events.
  expect(row.output_tokens).toBeLessThanOrEqual(ESTIMATE + 24);
  expect(row.input_tokens).toBeGreaterThan(0);
  expect(BigInt(row.cost_pico)).toBe(BigInt(row.input_tokens) * 1_000_000n + BigInt(row.output_tokens) * 2_000_000n);
}

describe("answers without usage are billed from their text, marked estimated (item 9)", () => {
  it.each([
    ["chat", "hostile/no-usage", "a chat upstream, relayed natively"],
    ["chat", "hostile-claude/no-usage", "an Anthropic upstream, translated"],
    ["messages", "hostile-claude/no-usage", "an Anthropic upstream, relayed natively"],
    ["messages", "hostile/no-usage", "a chat upstream, translated"],
    ["responses", "hostile/no-usage", "a chat upstream, translated"],
  ] as const)("%s client, stream from %s (%s)", async (client, model, _how) => {
    expectEstimated(await billed(client, model, true));
  });

  it.each([
    ["chat", "hostile/no-usage"],
    ["chat", "hostile-claude/no-usage"],
    ["messages", "hostile-claude/no-usage"],
    ["messages", "hostile/no-usage"],
    ["responses", "hostile/no-usage"],
  ] as const)("%s client, JSON answer from %s", async (client, model) => {
    const row = await billed(client, model, false);
    expectEstimated(row);
    expect(row.output_tokens).toBe(ESTIMATE); // one text, estimated whole
  });

  it("an upstream that does report usage is billed its own figures, not estimated", async () => {
    const requestId = "req-estimate-reported";
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: "POST", headers: gw.headers(requestId),
      body: JSON.stringify({ model: "openai/gpt-4o-mini", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] }),
    });
    const text = await res.text();
    const usage = JSON.parse(text.split("\n\n").filter((f) => f.includes('"usage":{')).at(-1)!.slice(6)).usage;
    const row = (await gw.ledger(requestId))!;
    expect(row).toMatchObject({ estimated: 0, input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens });
  });
});
