// A Bedrock provider configured to give everyone Claude Sonnet's 1M context (`headers: { anthropic-beta:
// context-1m-2025-08-07 }`, as docs/providers.md has it for Anthropic's API): InvokeModel takes betas from the body's
// anthropic_beta only, so the configured beta goes there, beside the client's own, and a prompt over 200k tokens is
// served and billed whole at the long-context tier. Before, the header went as an HTTP header Bedrock does not read,
// the call carried no beta, and the gateway billed such a prompt cut to 200k tokens at the base price.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Big from "big.js";
import { keyEntry, ledgerRecordOf, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { FAKE_AWS, startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";

const KEY = testKey("bedrock-beta");
const SONNET = "anthropic/claude-sonnet-4.5";
const BETA = "context-1m-2025-08-07";
const BIG = "y".repeat(1_000_000); // about 250 000 tokens as the fake counts them

let bedrock: FakeBedrock;
let gw: TestGateway;

beforeAll(async () => {
  bedrock = await startFakeBedrock();
  gw = await startTestGateway({
    providers: {
      aws: { protocol: "bedrock", region: FAKE_AWS.region, aws_access_key_id: FAKE_AWS.accessKeyId, aws_secret_access_key: FAKE_AWS.secretAccessKey, base_url: bedrock.baseUrl, headers: { "Anthropic-Beta": BETA } },
    },
    models: {
      // The 200k window the gateway holds a call without the beta to, and bills cut at: with the beta seen it is 1M.
      [SONNET]: { type: "language", context_window: 200000, max_tokens: 64000, endpoints: [{ provider: "aws", model: "global.anthropic.claude-sonnet-4-5-20250929-v1:0", pricing: { input: "0.000003", output: "0.000015", long_context: { above_input_tokens: 200000, input: "0.000006", output: "0.0000225", context_window: 1000000 } } }] },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)], budget: { usd: "100", period: "month" } } },
  });
});

afterAll(async () => {
  await gw?.close();
  await bedrock?.close();
});

/** What the ledger billed `record`, recomputed at the given per-token prices. */
const at = (record: { inputTokens: number; outputTokens: number }, input: string, output: string) =>
  new Big(input).times(record.inputTokens).plus(new Big(output).times(record.outputTokens)).toFixed();
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
