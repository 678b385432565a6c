// A Messages client (the official @anthropic-ai/sdk) on models that are not Claude, on the shipped gateway.yaml: a
// Bedrock Converse model (amazon/nova-pro) that stops at one of the client's stop sequences is answered stop_reason
// stop_sequence with the sequence Converse names (additionalModelResponseFields), JSON and stream, as Anthropic
// answers; a full context window is model_context_window_exceeded, not max_tokens. Before, both went through chat's
// finish_reason and came back end_turn (stop_sequence null) and max_tokens. The answer also has every field Anthropic's
// has and the SDK types required (usage's cache_creation, server_tool_use, service_tier..., a text block's
// citations), null where the upstream does not say. An OpenAI chat upstream does not say which stop matched: end_turn.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { listenLoopback, readRequest, type Loopback, type Recorded } from "./upstreams/http-fake.ts";
import { eventFrame } from "./upstreams/bedrock.ts";

let fake: Loopback;
let gw: TestGateway;
let anthropic: Anthropic;
const requests: Recorded[] = [];

/** The Converse model stops at "END" (a prompt saying "too long": its context window is full). */
function converse(path: string, body: any, res: ServerResponse) {
  const full = JSON.stringify(body.messages).includes("too long");
  const stopReason = full ? "model_context_window_exceeded" : "stop_sequence";
  const text = "1 2 3 ";
  const usage = { inputTokens: 12, outputTokens: 6, totalTokens: 18 };
  if (path.endsWith("/converse-stream")) {
    res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
    return res.end(Buffer.concat([
      eventFrame("messageStart", { role: "assistant" }),
      eventFrame("contentBlockDelta", { contentBlockIndex: 0, delta: { text } }),
      eventFrame("contentBlockStop", { contentBlockIndex: 0 }),
      eventFrame("messageStop", { stopReason, ...(full ? {} : { additionalModelResponseFields: { delta: { stop_sequence: "END" } } }) }),
      eventFrame("metadata", { usage, metrics: { latencyMs: 1 } }),
    ]));
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({
    output: { message: { role: "assistant", content: [{ text }] } }, stopReason, usage, metrics: { latencyMs: 1 },
    ...(full ? {} : { additionalModelResponseFields: { stop_sequence: "END" } }),
  }));
}

/** The OpenAI chat model stops at a stop sequence too; chat says only "stop". */
function chat(body: any, res: ServerResponse) {
  const usage = { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 };
  if (body.stream) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (o: Record<string, unknown>) => `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", service_tier: "default", choices: [], ...o })}\n\n`;
    return res.end(chunk({ choices: [{ index: 0, delta: { role: "assistant", content: "1 2 3 " }, finish_reason: null }] })
      + chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) + chunk({ usage }) + "data: [DONE]\n\n");
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", created: 1, model: "gpt-4o-mini", service_tier: "default", choices: [{ index: 0, message: { role: "assistant", content: "1 2 3 ", refusal: null }, finish_reason: "stop" }], usage }));
}

beforeAll(async () => {
  fake = await listenLoopback(async (req, res) => {
    const r = await readRequest(req);
    requests.push(r);
    if (r.path.startsWith("/bedrock/")) return converse(r.path, r.body, res);
    if (r.path === "/openai/v1/chat/completions") return chat(r.body, res);
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ message: `no ${r.path}` }));
  });
  const config = shippedConfig({ openai: `${fake.origin}/openai/v1`, anthropic: `${fake.origin}/anthropic` });
  config.providers.bedrock = { protocol: "bedrock", region: "us-east-1", base_url: `${fake.origin}/bedrock`, api_key: "bedrock-fake-key" };
  gw = await startTestGateway(config, { env: providerEnv(config) });
  anthropic = new Anthropic({ apiKey: SHIPPED_KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

beforeEach(() => {
  requests.length = 0;
});

const ask = (model: string, content = "Count to 3, then say END.") => ({ model, max_tokens: 100, stop_sequences: ["END"], messages: [{ role: "user" as const, content }] });

/** What Anthropic's usage has that chat does not say, as the answer carries it. */
const UNSAID = { cache_creation: null, server_tool_use: null, inference_geo: null, output_tokens_details: null, speed: null };

describe("a Messages client on a Bedrock Converse model that stops at a stop sequence", () => {
  it("messages.create: stop_reason stop_sequence, stop_sequence END; usage and the text block with every field, null where unsaid", async () => {
    const msg = await anthropic.messages.create(ask("amazon/nova-pro"));
    expect(requests.map((r) => r.path)).toEqual(["/bedrock/model/us.amazon.nova-pro-v1%3A0/converse"]);
    expect(requests[0]!.body.inferenceConfig.stopSequences).toEqual(["END"]);
    expect(msg.stop_reason).toBe("stop_sequence");
    expect(msg.stop_sequence).toBe("END");
    expect(msg.content).toEqual([{ type: "text", text: "1 2 3 ", citations: null }]);
    expect(msg.usage).toEqual({ ...UNSAID, input_tokens: 12, output_tokens: 6, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, service_tier: null });
  });

  it("messages.stream().finalMessage(): the same", async () => {
    const msg = await anthropic.messages.stream(ask("amazon/nova-pro")).finalMessage();
    expect(requests.map((r) => r.path)).toEqual(["/bedrock/model/us.amazon.nova-pro-v1%3A0/converse-stream"]);
    expect(msg.stop_reason).toBe("stop_sequence");
    expect(msg.stop_sequence).toBe("END");
    expect(msg.content).toEqual([{ type: "text", text: "1 2 3 ", citations: null }]);
    expect(msg.usage).toEqual({ ...UNSAID, input_tokens: 12, output_tokens: 6, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, service_tier: null });
  });

  it("a full context window is model_context_window_exceeded, not max_tokens, JSON and stream", async () => {
    const body = ask("amazon/nova-pro", "Something too long.");
    expect(await anthropic.messages.create(body)).toMatchObject({ stop_reason: "model_context_window_exceeded", stop_sequence: null });
    expect(await anthropic.messages.stream(body).finalMessage()).toMatchObject({ stop_reason: "model_context_window_exceeded", stop_sequence: null });
  });
});

describe("a Messages client on an OpenAI chat model", () => {
  it("OpenAI does not say which stop sequence matched: end_turn, stop_sequence null; the fields all there, its tier by Anthropic's name", async () => {
    for (const msg of [await anthropic.messages.create(ask("openai/gpt-4o-mini")), await anthropic.messages.stream(ask("openai/gpt-4o-mini")).finalMessage()]) {
      expect(msg).toMatchObject({ stop_reason: "end_turn", stop_sequence: null });
      expect(msg.content).toEqual([{ type: "text", text: "1 2 3 ", citations: null }]);
      expect(msg.usage).toEqual({ ...UNSAID, input_tokens: 12, output_tokens: 6, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, service_tier: "standard" });
    }
    expect(requests.map((r) => r.body.stop)).toEqual([["END"], ["END"]]);
  });
});
