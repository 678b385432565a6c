// An OpenAI SDK client (chat and Responses) on models whose upstream speaks another protocol, on the shipped
// gateway.yaml, is told the service tier that served it, as it is on an OpenAI upstream: Anthropic's
// usage.service_tier (standard is OpenAI's default, priority as such) and Bedrock Converse's serviceTier.type. Before,
// a chat answer had no service_tier and a Responses one said "default" whatever the upstream said. A Claude stream
// names its tier in message_start: every chat chunk carries it. Converse names it in the stream's last event
// (metadata, after messageStop): the usage chunk carries it, and the Responses stream's final response.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import OpenAI from "openai";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { listenLoopback, readRequest, type Loopback, type Recorded } from "./upstreams/http-fake.ts";
import { eventFrame } from "./upstreams/bedrock.ts";

let fake: Loopback;
let gw: TestGateway;
let openai: OpenAI;
const requests: Recorded[] = [];

const TEXT = "Paris.";

/** Claude on the Claude API, served at the priority tier (usage.service_tier in message_start, as Anthropic streams it). */
function anthropic(body: any, res: ServerResponse) {
  const usage = { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 3, service_tier: "priority" };
  const msg = { id: "msg_1", type: "message", role: "assistant", model: "claude-opus-4-6", stop_reason: null, stop_sequence: null };
  if (body.stream) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const ev = (type: string, payload: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
    return res.end(
      ev("message_start", { message: { ...msg, content: [], usage: { ...usage, output_tokens: 1 } } })
      + ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } })
      + ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: TEXT } })
      + ev("content_block_stop", { index: 0 })
      + ev("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 3 } })
      + ev("message_stop", {}),
    );
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ ...msg, content: [{ type: "text", text: TEXT, citations: null }], stop_reason: "end_turn", usage }));
}

/** Nova on Bedrock Converse, served at the flex tier (serviceTier; in a stream, in metadata, its last event). */
function converse(path: string, res: ServerResponse) {
  const usage = { inputTokens: 12, outputTokens: 3, totalTokens: 15 };
  const serviceTier = { type: "flex" };
  if (path.endsWith("/converse-stream")) {
    res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
    return res.end(Buffer.concat([
      eventFrame("messageStart", { role: "assistant" }),
      eventFrame("contentBlockDelta", { contentBlockIndex: 0, delta: { text: TEXT } }),
      eventFrame("contentBlockStop", { contentBlockIndex: 0 }),
      eventFrame("messageStop", { stopReason: "end_turn" }),
      eventFrame("metadata", { usage, metrics: { latencyMs: 1 }, serviceTier }),
    ]));
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ output: { message: { role: "assistant", content: [{ text: TEXT }] } }, stopReason: "end_turn", usage, metrics: { latencyMs: 1 }, serviceTier }));
}

beforeAll(async () => {
  fake = await listenLoopback(async (req, res) => {
    const r = await readRequest(req);
    requests.push(r);
    if (r.path === "/anthropic/v1/messages") return anthropic(r.body, res);
    if (r.path.startsWith("/bedrock/")) return converse(r.path, res);
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ message: `no ${r.path}` }));
  });
  const config = shippedConfig({ openai: `${fake.origin}/openai/v1`, anthropic: `${fake.origin}/anthropic` });
  config.providers.bedrock = { protocol: "bedrock", region: "us-east-1", base_url: `${fake.origin}/bedrock`, api_key: "bedrock-fake-key" };
  gw = await startTestGateway(config, { env: providerEnv(config) });
  openai = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

beforeEach(() => {
  requests.length = 0;
});

const CASES = [
  { model: "anthropic/claude-opus-4.6", tier: "priority", upstream: "/anthropic/v1/messages" },
  { model: "amazon/nova-pro", tier: "flex", upstream: "/bedrock/model/us.amazon.nova-pro-v1%3A0/converse" },
];

describe.each(CASES)("$model served at the $tier tier", ({ model, tier, upstream }) => {
  const input = "Capital of France?";

  it("responses.create and responses.stream().finalResponse(): service_tier is the upstream's", async () => {
    const r = await openai.responses.create({ model, input });
    expect(r.output_text).toBe(TEXT);
    expect(r.service_tier).toBe(tier);
    const streamed = await openai.responses.stream({ model, input }).finalResponse();
    expect(streamed.output_text).toBe(TEXT);
    expect(streamed.service_tier).toBe(tier);
    expect(requests.map((q) => q.path)).toEqual([upstream, upstream.endsWith("/converse") ? `${upstream}-stream` : upstream]);
  });

  it("chat.completions.create: service_tier is the upstream's, JSON and on the stream's chunks", async () => {
    const c = await openai.chat.completions.create({ model, messages: [{ role: "user", content: input }] });
    expect(c.choices[0]!.message.content).toBe(TEXT);
    expect(c.service_tier).toBe(tier);
    const chunks = [];
    for await (const chunk of await openai.chat.completions.create({ model, messages: [{ role: "user", content: input }], stream: true, stream_options: { include_usage: true } })) chunks.push(chunk);
    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 3 });
    expect(usageChunk.service_tier).toBe(tier);
    // Claude names it in message_start: every chunk. Converse names it last: the usage chunk only.
    const tiers = chunks.map((k) => k.service_tier);
    expect(tiers).toEqual(model.startsWith("anthropic/") ? chunks.map(() => tier) : [...chunks.slice(1).map(() => undefined), tier]);
  });
});
