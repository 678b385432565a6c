// Claude Sonnet 4.5's 1M context on the gateway as shipped (gateway.yaml, the default catalog and pipeline): a prompt
// over 200k tokens is billed at the tier ($6 / $22.50 per million) wherever the upstream call carried the
// context-1m beta and so was served it, not cut to 200k at $3 by the usage ceiling: a Messages client's
// `anthropic_beta` body field routed to Bedrock's InvokeModel (which reads betas from the body), and every client's
// call to a provider configured with `headers: { anthropic-beta: context-1m-2025-08-07 }`, a chat client's included.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Big from "big.js";
import { keyEntry, ledgerRecordOf, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_AWS, startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";

const KEY = testKey("sonnet-1m");
const SONNET = "anthropic/claude-sonnet-4.5";
const BETA = "context-1m-2025-08-07";

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let bedrock: FakeBedrock;
let gw: TestGateway;

beforeAll(async () => {
  [openai, anthropic, bedrock] = await Promise.all([startFakeOpenAI(), startFakeAnthropic(), startFakeBedrock()]);
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.providers.bedrock.base_url = bedrock.baseUrl;
  // The operator who gives everyone the 1M context on Anthropic's API (docs/providers.md: headers go on every call).
  config.providers.anthropic.headers = { "anthropic-beta": BETA };
  config.projects.sonnet = { keys: [keyEntry("sonnet-1m", KEY)], budget: { usd: "100", period: "month" } };
  const env = { ...providerEnv(config), AWS_ACCESS_KEY_ID: FAKE_AWS.accessKeyId, AWS_SECRET_ACCESS_KEY: FAKE_AWS.secretAccessKey, AWS_REGION: FAKE_AWS.region };
  gw = await startTestGateway(config, { env });
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close(), bedrock?.close()]);
});

/** What the ledger billed `record`, recomputed at the given per-token prices. */
const at = (record: { inputTokens: number; outputTokens: number }, input: string, output: string) =>
  new Big(input).times(record.inputTokens).plus(new Big(output).times(record.outputTokens)).toFixed();
const only = (provider: string) => ({ providerOptions: { gateway: { only: [provider] } } });
const BIG = "y".repeat(1_000_000); // about 250 000 tokens as the fakes count them

describe("a Messages request whose body asks for the 1M context, served by Bedrock's InvokeModel", () => {
  it("no anthropic-beta header, `anthropic_beta` in the body: the 250k-token prompt is billed whole at the tier", async () => {
    const from = bedrock.requests.length;
    const r = await postJson(`${gw.url}/api/v1/messages`, { model: SONNET, max_tokens: 50, anthropic_beta: [BETA], messages: [{ role: "user", content: BIG }], ...only("bedrock") },
      { "x-api-key": KEY, "anthropic-version": "2023-06-01" });
    expect(r.status).toBe(200);
    const sent = bedrock.requests.slice(from);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body.anthropic_beta).toEqual([BETA]);
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.provider).toBe("bedrock");
    expect(record.inputTokens).toBeGreaterThan(200_000);
    const billed = at(record, "0.000006", "0.0000225"); // about $1.50 for the prompt, not 200k at $3 ($0.60)
    expect(record.costUsd).toBe(billed);
    expect(r.headers.get("x-mg-cost-usd")).toBe(billed);
  });
});

describe("the anthropic provider configured to send the 1M beta on every call", () => {
  it.each([
    ["a Messages client without the header", () => postJson(`${gw.url}/api/v1/messages`, { model: SONNET, max_tokens: 50, messages: [{ role: "user", content: BIG }], ...only("anthropic") }, { "x-api-key": KEY, "anthropic-version": "2023-06-01" })],
    ["a chat client (its call translated, the configured header still sent)", () => postJson(`${gw.url}/api/v1/chat/completions`, { model: SONNET, max_tokens: 50, messages: [{ role: "user", content: BIG }], ...only("anthropic") }, { authorization: `Bearer ${KEY}` })],
  ])("%s: the 250k-token prompt is billed whole at the tier", async (_, send) => {
    const from = anthropic.requests.length;
    const r = await send();
    expect(r.status).toBe(200);
    const sent = anthropic.requests.slice(from).filter((q) => q.path.endsWith("/messages"));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers["anthropic-beta"]).toBe(BETA);
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.provider).toBe("anthropic");
    expect(record.inputTokens).toBeGreaterThan(200_000);
    const billed = at(record, "0.000006", "0.0000225");
    expect(record.costUsd).toBe(billed);
    expect(r.headers.get("x-mg-cost-usd")).toBe(billed);
  });
});
