// A client's own `anthropic-beta` header and Claude on Bedrock InvokeModel: the call and its billing must agree on
// whether the 1M context is open, or a 250k-token prompt is served at 1M and billed cut to 200k at the base price.
// A Messages client's call is native: its beta goes in the body's anthropic_beta and the prompt is billed whole at
// the long-context tier. A chat, Responses or Gemini client's call is translated, and as on Anthropic (the driver's
// forwardClient rule; stream-transcoder sends no client headers with a translated body) its protocol headers do not
// apply: the beta is not sent and the window stays 200k; a provider's configured beta opens it for every client.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerRecordOf, postJson, testKey, type TestGateway } from "./helpers/gateway.ts";
import { BETA, BIG, SONNET, startLongContextBedrock } from "./helpers/long-context-bedrock.ts";
import type { FakeBedrock } from "./upstreams/bedrock.ts";

const KEY = testKey("bedrock-client-beta");
const beta = { "anthropic-beta": BETA };

let bedrock: FakeBedrock;
let gw: TestGateway;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ bedrock, gw, close } = await startLongContextBedrock(KEY));
});
afterAll(() => close?.());

const gemini = (body: unknown) => fetch(`${gw.url}/api/v1beta/models/${SONNET}:generateContent`, { method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": KEY, ...beta }, body: JSON.stringify(body) })
  .then(async (res) => ({ status: res.status, text: await res.text(), headers: res.headers }));

describe("a client's anthropic-beta header to Claude on Bedrock InvokeModel: the call and its billing agree", () => {
  it.each([
    ["Messages (native): sent, billed whole at the tier", true, () => postJson(`${gw.url}/api/v1/messages`, { model: SONNET, max_tokens: 50, messages: [{ role: "user", content: BIG }] }, { "x-api-key": KEY, "anthropic-version": "2023-06-01", ...beta })],
    ["chat (translated): not sent, billed within 200k", false, () => postJson(`${gw.baseURL}/chat/completions`, { model: SONNET, max_tokens: 50, messages: [{ role: "user", content: BIG }] }, { authorization: `Bearer ${KEY}`, ...beta })],
    ["Responses (translated): not sent, billed within 200k", false, () => postJson(`${gw.baseURL}/responses`, { model: SONNET, max_output_tokens: 50, input: BIG }, { authorization: `Bearer ${KEY}`, ...beta })],
    ["Gemini (translated): not sent, billed within 200k", false, () => gemini({ contents: [{ role: "user", parts: [{ text: BIG }] }] })],
  ])("%s", async (_, opens, send) => {
    const from = bedrock.requests.length;
    const r = await send();
    expect(r.status, r.text).toBe(200);
    const sent = bedrock.requests.slice(from);
    expect(sent.map((s) => s.action)).toEqual(["invoke"]);
    const sentOpens = Array.isArray(sent[0]!.body.anthropic_beta) && sent[0]!.body.anthropic_beta.includes(BETA);
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    const billedWhole = record.inputTokens > 200_000;
    // The invariant: a call that opens 1M is billed whole, one that does not is billed within 200k.
    expect(billedWhole, "billed as the call was sent").toBe(sentOpens);
    expect(sentOpens).toBe(opens);
  });
});
