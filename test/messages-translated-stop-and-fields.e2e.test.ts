// A Messages client (the official @anthropic-ai/sdk) on models that are not Claude's own API, on the shipped
// gateway.yaml: a Bedrock Converse model that stops at one of the client's stop sequences is answered stop_reason
// stop_sequence with the sequence that matched, JSON and stream, as Anthropic answers; a full context window is
// model_context_window_exceeded, not max_tokens. Before, both went through chat's finish_reason and came back end_turn
// (stop_sequence null) and max_tokens. Converse names the matched sequence only when the request asks for it
// (additionalModelResponseFieldPaths, protocols-2.md §2.2): the gateway asks Claude on Converse (a bedrock provider with
// bedrock_claude_api: converse); Nova is not asked, so the one sequence a client sent is the one that matched, and of
// several it cannot say which: end_turn, stop_sequence null, never stop_sequence with null (which Anthropic never
// sends). The answer also has every field Anthropic's has and the SDK types required (usage's cache_creation,
// server_tool_use, service_tier..., a text block's citations), null where the upstream does not say. An OpenAI chat
// upstream does not say which stop matched: end_turn.
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

/** What a JSON Pointer (RFC 6901) names in `doc`, or undefined. */
function pointed(doc: unknown, pointer: string): unknown {
  let at: any = doc;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (at === null || typeof at !== "object" || !(key in at)) return undefined;
    at = at[key];
  }
  return at;
}

/**
 * As Converse answers: the model's own response fields only at the paths the request asked in
 * additionalModelResponseFieldPaths (a path the model's response does not hold is left out), none when it asked none.
 * Claude's own answer names the matched stop at stop_sequence (JSON) and delta.stop_sequence (a stream's
 * message_delta); Nova's says nothing of it.
 */
function askedFields(body: any, own: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, any> = {};
  for (const path of Array.isArray(body.additionalModelResponseFieldPaths) ? body.additionalModelResponseFieldPaths : []) {
    const v = pointed(own, path);
    if (v === undefined) continue;
    const keys = path.split("/").slice(1);
    let at = out;
    for (const k of keys.slice(0, -1)) at = at[k] ??= {};
    at[keys.at(-1)!] = v;
  }
  return Object.keys(out).length ? { additionalModelResponseFields: out } : {};
}

/** The Converse model stops at "END" (a prompt saying "too long": its context window is full). */
function converse(path: string, body: any, res: ServerResponse) {
  const full = JSON.stringify(body.messages).includes("too long");
  const stopReason = full ? "model_context_window_exceeded" : "stop_sequence";
  const claude = path.includes("anthropic.claude");
  const matched = full ? null : "END";
  const text = "1 2 3 ";
  const usage = { inputTokens: 12, outputTokens: 6, totalTokens: 18 };
  if (path.endsWith("/converse-stream")) {
    res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
    return res.end(Buffer.concat([
      eventFrame("messageStart", { role: "assistant" }),
      eventFrame("contentBlockDelta", { contentBlockIndex: 0, delta: { text } }),
      eventFrame("contentBlockStop", { contentBlockIndex: 0 }),
      eventFrame("messageStop", { stopReason, ...askedFields(body, claude ? { delta: { stop_reason: stopReason, stop_sequence: matched } } : {}) }),
      eventFrame("metadata", { usage, metrics: { latencyMs: 1 } }),
    ]));
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({
    output: { message: { role: "assistant", content: [{ text }] } }, stopReason, usage, metrics: { latencyMs: 1 },
    ...askedFields(body, claude ? { stop_reason: stopReason, stop_sequence: matched } : {}),
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
  // Claude on Bedrock through Converse (InvokeModel is the default); the Claude API off (no key), so Bedrock serves it.
  config.providers.bedrock = { protocol: "bedrock", region: "us-east-1", base_url: `${fake.origin}/bedrock`, api_key: "bedrock-fake-key", bedrock_claude_api: "converse" };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), ANTHROPIC_API_KEY: "" } });
  anthropic = new Anthropic({ apiKey: SHIPPED_KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

beforeEach(() => {
  requests.length = 0;
});

const ask = (model: string, content = "Count to 3, then say END.", stop_sequences = ["END"]) => ({ model, max_tokens: 100, stop_sequences, messages: [{ role: "user" as const, content }] });
const COUNT = "Count to 3, then say END.";

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

describe("which stop sequence matched, where Converse names it only when asked", () => {
  it("Nova with two stop sequences: end_turn, stop_sequence null (never stop_sequence with null), JSON and stream", async () => {
    const body = ask("amazon/nova-pro", COUNT, ["END", "STOP"]);
    for (const msg of [await anthropic.messages.create(body), await anthropic.messages.stream(body).finalMessage()]) {
      expect(msg).toMatchObject({ stop_reason: "end_turn", stop_sequence: null });
    }
    // Nova is not asked for Claude's field.
    expect(requests.map((r) => r.body.additionalModelResponseFieldPaths)).toEqual([undefined, undefined]);
  });

  it("Claude on Converse is asked which one and names it, of two: stop_reason stop_sequence, stop_sequence END, JSON and stream", async () => {
    const body = ask("anthropic/claude-sonnet-4.6", COUNT, ["END", "STOP"]);
    for (const msg of [await anthropic.messages.create(body), await anthropic.messages.stream(body).finalMessage()]) {
      expect(msg).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "END" });
    }
    expect(requests.map((r) => r.path)).toEqual(["/bedrock/model/global.anthropic.claude-sonnet-4-6/converse", "/bedrock/model/global.anthropic.claude-sonnet-4-6/converse-stream"]);
    for (const r of requests) expect(r.body.additionalModelResponseFieldPaths).toEqual(["/stop_sequence", "/delta/stop_sequence"]);
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
