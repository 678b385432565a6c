// Metering on the messages protocol: native Anthropic streams and chat streams translated from one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Big from "big.js";
import { startTestGateway, type TestGateway } from "../../test/helpers/gateway.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "../../test/upstreams/anthropic.ts";
import { auth, policyConfig } from "../../test/helpers/policy-config.ts";

const PRICING = { input: "0.000003", output: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375" };

describe("usage-metering on the messages protocol", () => {
  let fake: FakeAnthropic;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    const config = policyConfig("http://127.0.0.1:9/v1", { acme: { allow_models: ["*"] } }) as any;
    config.providers.claude = { protocol: "anthropic", base_url: fake.baseUrl, api_key: FAKE_ANTHROPIC_KEY };
    config.models["anthropic/claude-x"].endpoints = [{ provider: "claude", model: "claude-x", pricing: PRICING }];
    gw = await startTestGateway(config);
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  async function stream(path: string, body: unknown, requestId: string) {
    const res = await fetch(`${gw.baseURL}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", "x-request-id": requestId, ...auth() },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return res.text();
  }

  // The record's place before message_stop is checked by hold.test.ts and push.test.ts, which can see the order.
  it("bills a native messages stream from its own usage events", async () => {
    const text = await stream("/messages", { model: "anthropic/claude-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "Hi" }] }, "req-msg-1");
    expect(text).toContain("event: message_stop");
    const [e] = (await gw.gateway.store.ledger({})).filter((x) => x.requestId === "req-msg-1");
    const start = JSON.parse(/event: message_start\ndata: (.*)/.exec(text)![1]!).message.usage;
    const delta = JSON.parse(/event: message_delta\ndata: (.*)/.exec(text)![1]!).usage;
    expect(e).toMatchObject({ endpoint: "messages", provider: "claude", outcome: "ok", estimated: false, outputTokens: delta.output_tokens });
    expect(e!.inputTokens).toBe(start.input_tokens);
    const expected = new Big(e!.inputTokens).times(PRICING.input)
      .plus(new Big(e!.outputTokens).times(PRICING.output))
      .plus(new Big(e!.cacheReadTokens).times(PRICING.input_cache_read))
      .plus(new Big(e!.cacheWriteTokens).times(PRICING.input_cache_write));
    expect(e!.costUsd).toBe(expected.toFixed());
  });

  it("bills a chat stream translated to an Anthropic upstream", async () => {
    const text = await stream("/chat/completions", { model: "anthropic/claude-x", max_tokens: 50, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "Hi" }] }, "req-msg-2");
    const usageChunk = text.split("\n\n").map((f) => f.replace(/^data: /, "")).filter((d) => d.includes('"usage":{')).map((d) => JSON.parse(d)).pop();
    const [e] = (await gw.gateway.store.ledger({})).filter((x) => x.requestId === "req-msg-2");
    expect(e).toMatchObject({ endpoint: "chat", outcome: "ok", estimated: false, outputTokens: usageChunk.usage.completion_tokens });
  });
});
