// A Bedrock provider configured to give everyone Claude Sonnet's 1M context (`headers: { anthropic-beta:
// context-1m-2025-08-07 }`, as docs/providers.md has it for Anthropic's API): InvokeModel takes betas from the body's
// anthropic_beta only, so the configured beta goes there, beside the client's own, and a prompt over 200k tokens is
// served and billed whole at the long-context tier. Before, the header went as an HTTP header Bedrock does not read,
// the call carried no beta, and the gateway billed such a prompt cut to 200k tokens at the base price.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerRecordOf, postJson, testKey, type TestGateway } from "./helpers/gateway.ts";
import { at, BETA, BIG, SONNET, startLongContextBedrock } from "./helpers/long-context-bedrock.ts";
import type { FakeBedrock } from "./upstreams/bedrock.ts";

const KEY = testKey("bedrock-beta");

let bedrock: FakeBedrock;
let gw: TestGateway;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ bedrock, gw, close } = await startLongContextBedrock(KEY, { headers: { "Anthropic-Beta": BETA } }));
});
afterAll(() => close?.());

const messages = (extra: Record<string, string> = {}) => postJson(`${gw.url}/api/v1/messages`, { model: SONNET, max_tokens: 50, messages: [{ role: "user", content: BIG }] },
  { "x-api-key": KEY, "anthropic-version": "2023-06-01", ...extra });

describe("a Bedrock provider configured with the 1M beta", () => {
  it.each([
    ["a Messages client without betas", () => messages(), [BETA]],
    ["a Messages client with betas of its own (added to the configured one)", () => messages({ "anthropic-beta": "interleaved-thinking-2025-05-14" }), [BETA, "interleaved-thinking-2025-05-14"]],
    ["a chat client (its call translated)", () => postJson(`${gw.baseURL}/chat/completions`, { model: SONNET, max_tokens: 50, messages: [{ role: "user", content: BIG }] }, { authorization: `Bearer ${KEY}` }), [BETA]],
  ])("%s: the beta reaches InvokeModel's body, the 250k-token prompt is billed whole at the tier", async (_, send, betas) => {
    const from = bedrock.requests.length;
    const r = await send();
    expect(r.status, r.text).toBe(200);
    const sent = bedrock.requests.slice(from);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.action).toBe("invoke");
    expect(sent[0]!.body.anthropic_beta).toEqual(betas);
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.inputTokens).toBeGreaterThan(200_000);
    const billed = at(record, "0.000006", "0.0000225"); // about $1.50 for the prompt, not 200k at $3 ($0.60)
    expect(record.costUsd).toBe(billed);
    expect(r.headers.get("x-mg-cost-usd")).toBe(billed);
  });
});
