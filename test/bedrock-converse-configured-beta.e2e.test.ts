// A Bedrock provider serving Claude through Converse (bedrock_claude_api: converse) and configured to give everyone
// Claude Sonnet's 1M context (`headers: { anthropic-beta: context-1m-2025-08-07 }`): Converse takes Claude's betas in
// additionalModelRequestFields.anthropic_beta only, so the configured beta goes there, and a prompt over 200k tokens
// is served and billed whole at the long-context tier. Before, the header went as an HTTP header Bedrock does not
// read: Claude refused the prompt (the fake does too), and the gateway held and billed it as a 200k-window request.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerRecordOf, postJson, testKey, type TestGateway } from "./helpers/gateway.ts";
import { at, BETA, BIG, SONNET, startLongContextBedrock } from "./helpers/long-context-bedrock.ts";
import type { FakeBedrock } from "./upstreams/bedrock.ts";

const KEY = testKey("bedrock-converse-beta");

let bedrock: FakeBedrock;
let gw: TestGateway;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ bedrock, gw, close } = await startLongContextBedrock(KEY, { bedrock_claude_api: "converse", headers: { "Anthropic-Beta": BETA } }));
});
afterAll(() => close?.());

describe("a Bedrock Converse provider configured with the 1M beta", () => {
  it.each([
    ["a chat client", () => postJson(`${gw.baseURL}/chat/completions`, { model: SONNET, max_tokens: 50, messages: [{ role: "user", content: BIG }] }, { authorization: `Bearer ${KEY}` })],
    ["a Messages client (its call translated)", () => postJson(`${gw.url}/api/v1/messages`, { model: SONNET, max_tokens: 50, messages: [{ role: "user", content: BIG }] }, { "x-api-key": KEY, "anthropic-version": "2023-06-01" })],
  ])("%s: the beta reaches Converse's additionalModelRequestFields, the 250k-token prompt is billed whole at the tier", async (_, send) => {
    const from = bedrock.requests.length;
    const r = await send();
    expect(r.status, r.text).toBe(200);
    const sent = bedrock.requests.slice(from);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.action).toBe("converse");
    expect(sent[0]!.body.additionalModelRequestFields).toEqual({ anthropic_beta: [BETA] });
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.inputTokens).toBeGreaterThan(200_000);
    const billed = at(record, "0.000006", "0.0000225"); // about $1.50 for the prompt, not 200k at $3 ($0.60)
    expect(record.costUsd).toBe(billed);
    expect(r.headers.get("x-mg-cost-usd")).toBe(billed);
  });
});
