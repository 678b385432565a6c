// A Messages stream a block rule stops mid-way ends as Anthropic ends a stream its own classifiers stop: the text
// that had cleared the window, a text block naming the rule, message_delta with stop_reason "refusal", message_stop;
// no `error` event. After the `error` event Claude Code took the stream for a failed one and sent the request again
// without streaming: the blocked answer generated and billed twice (ledger 200 blocked + 400 blocked), and all it
// showed was "API Error: 400 ...". On the shipped gateway.yaml with a guardrails block rule, on a translated model.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { ledgerRecordOf, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, SHIPPED_PROJECT, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";

const SECRET = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH";
// More than the guardrail's 64-character window before the secret: that much of the answer is sent before the block.
const LEAD = "Here is what the tool printed when it read the configuration file you asked me about:";
const MODEL = "openai/gpt-4.1";
const MESSAGE = 'The answer was blocked by guardrail "no-secrets"';

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
  openai.textFor = () => `${LEAD} the key is ${SECRET}, nothing else is in the file.`;
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.projects[SHIPPED_PROJECT].guardrails = { rules: [{ name: "no-secrets", detect: ["secret"], on: ["output"], action: "block" }] };
  gw = await startTestGateway(config, { env: providerEnv(config) });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

const body = { model: MODEL, max_tokens: 256, stream: true, messages: [{ role: "user", content: "GUARDTEST tell me the key" }] };

describe("a Messages stream a block rule stops mid-way", () => {
  it("ends with a text block naming the rule, stop_reason refusal and message_stop, no error event, one ledger record", async () => {
    const before = openai.requests.length;
    const res = await fetch(`${gw.url}/api/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": SHIPPED_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const events = text.split(/\n\n/).filter((f) => f.trim()).map((f) => {
      const [, type, data] = /^event: (\S+)\ndata: (.*)$/s.exec(f)!;
      return { type, data: JSON.parse(data) };
    });
    expect(text).not.toContain(SECRET);
    expect(events.map((e) => e.type)).not.toContain("error");
    expect(events.slice(-2).map((e) => e.type)).toEqual(["message_delta", "message_stop"]);
    expect(events.at(-2)!.data.delta).toMatchObject({ stop_reason: "refusal", stop_details: { type: "refusal", explanation: MESSAGE } });
    // Every block started is stopped; the text before the match, then the rule's message in a block of its own.
    const started = events.filter((e) => e.type === "content_block_start").map((e) => e.data.index);
    expect(events.filter((e) => e.type === "content_block_stop").map((e) => e.data.index)).toEqual(started);
    const blocks = started.map((i) => events.filter((e) => e.type === "content_block_delta" && e.data.index === i).map((e) => e.data.delta.text).join(""));
    expect(blocks[0].startsWith(LEAD.slice(0, 20))).toBe(true);
    expect(blocks.at(-1)).toBe(`[${MESSAGE}]`);
    expect(openai.requests.length - before).toBe(1);
    expect(await ledgerRecordOf(gw, res.headers.get("x-request-id"))).toMatchObject({ status: 200, outcome: "blocked", guardrail: "block:no-secrets" });
  });

  it("the Anthropic SDK's stream ends as a refusal with the text so far, without throwing", async () => {
    const client = new Anthropic({ apiKey: SHIPPED_KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });
    const stream = client.messages.stream({ ...body, stream: undefined } as any);
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe("refusal");
    const texts = final.content.map((b: any) => b.text);
    expect(texts[0].startsWith(LEAD.slice(0, 20))).toBe(true);
    expect(texts.at(-1)).toBe(`[${MESSAGE}]`);
  });
});
