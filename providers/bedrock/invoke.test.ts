import { describe, expect, it } from "vitest";
import { fromUtf8 } from "@smithy/util-utf8";
import { anthropicEventReads, anthropicEvents, invokeBody } from "./invoke.ts";
import { withoutBetaHeader } from "./betas.ts";
import { eventStreamCodec } from "./eventstream.ts";
import type { Target } from "../../core/contracts/provider.ts";

const codec = await eventStreamCodec();

const target: Target = { modelId: "anthropic/claude-sonnet-4.5", provider: "bedrock", upstreamModel: "global.anthropic.claude-sonnet-4-5-20250929-v1:0", pricing: { output: "0.000015" } };

describe("InvokeModel body (reference §5.1)", () => {
  it("anthropic_version in, model/stream/gateway fields out, first-party-only fields dropped and named", () => {
    const t = invokeBody({ model: "x", stream: true, max_tokens: 10, messages: [], metadata: { user_id: "u" }, service_tier: "auto", providerOptions: {} }, target, "bedrock", {});
    expect(t.body).toEqual({ max_tokens: 10, messages: [], anthropic_version: "bedrock-2023-05-31" });
    expect(t.dropped).toEqual(["metadata", "service_tier"]);
  });

  it("betas: the header's accepted ones go in the body (aliases mapped), refused ones are dropped", () => {
    const t = invokeBody({ max_tokens: 10, messages: [] }, target, "bedrock", { "anthropic-beta": "advanced-tool-use-2025-11-20, files-api-2025-04-14,context-1m-2025-08-07" });
    expect(t.body.anthropic_beta).toEqual(["tool-search-tool-2025-10-19", "context-1m-2025-08-07"]);
    expect(t.dropped).toEqual(["anthropic-beta"]);
  });

  it("the provider's configured anthropic-beta (any spelling) goes in the body too, the client's betas added, each once; the header itself is not sent", () => {
    const configured = { "Anthropic-Beta": "context-1m-2025-08-07, files-api-2025-04-14", "x-extra": "1" };
    const t = invokeBody({ max_tokens: 10, messages: [], anthropic_beta: ["pdfs-2024-09-25"] }, target, "bedrock", { "anthropic-beta": "context-1m-2025-08-07,interleaved-thinking-2025-05-14" }, configured);
    expect(t.body.anthropic_beta).toEqual(["pdfs-2024-09-25", "context-1m-2025-08-07", "interleaved-thinking-2025-05-14"]);
    // A configured beta Bedrock refuses is left out without naming it to the client (it did not ask for it).
    expect(t.dropped).toEqual([]);
    expect(invokeBody({ max_tokens: 10, messages: [] }, target, "bedrock", {}, configured).body.anthropic_beta).toEqual(["context-1m-2025-08-07"]);
    expect(withoutBetaHeader(configured)).toEqual({ "x-extra": "1" });
  });

  it("a message thread (the SDK tool runner's default) is the 400 naming thread that the SDK's threads go on unthreaded after", () => {
    const body = { max_tokens: 10, messages: [{ role: "user", content: "x" }], thread: { type: "create" } };
    expect(() => invokeBody(body, target, "bedrock", {}))
      .toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "thread", error_code: "thread_unsupported_request" }) }));
    expect(invokeBody({ ...body, thread: null }, target, "bedrock", {}).body).not.toHaveProperty("thread");
  });

  it("a dollar thinking budget becomes thinking with max_tokens above it", () => {
    const t = invokeBody({ max_tokens: 100, messages: [], providerOptions: { bedrock: { thinkingBudget: 0.03 } } }, target, "bedrock", {});
    expect([t.body.thinking, t.body.max_tokens]).toEqual([{ type: "enabled", budget_tokens: 2000 }, 2100]);
  });
});

describe("InvokeModelWithResponseStream frames -> Anthropic events", () => {
  const frame = (headers: Record<string, string>, payload: unknown) => {
    const h: Record<string, { type: "string"; value: string }> = {};
    for (const [k, v] of Object.entries(headers)) h[k] = { type: "string", value: v };
    return codec.encode({ headers: h, body: fromUtf8(JSON.stringify(payload)) });
  };
  const chunk = (ev: unknown) => frame({ ":event-type": "chunk", ":content-type": "application/json", ":message-type": "event" }, { bytes: Buffer.from(JSON.stringify(ev)).toString("base64"), p: "abc" });

  it("base64 payloads decoded into named events; untyped chunks and unknown events skipped; an exception frame throws", async () => {
    async function* body() {
      yield Buffer.concat([chunk({ type: "message_start", message: { id: "msg_bdrk_1" } }), chunk({ nope: 1 })]);
      yield frame({ ":event-type": "somethingNew", ":content-type": "application/json", ":message-type": "event" }, {});
      yield chunk({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "a\nb" } });
      yield frame({ ":exception-type": "throttlingException", ":content-type": "application/json", ":message-type": "exception" }, { message: "slow down" });
    }
    const got: unknown[] = [];
    const err = await (async () => { for await (const e of anthropicEvents(body(), "bedrock")) got.push(e); })().catch((e) => e);
    expect(got).toEqual([
      { event: "message_start", data: '{"type":"message_start","message":{"id":"msg_bdrk_1"}}' },
      { event: "content_block_delta", data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\\nb"}}' },
    ]);
    expect([err.code, err.retryable, err.message]).toEqual(["UPSTREAM_ERROR", true, "Provider bedrock failed mid-stream: throttlingException: slow down"]);
  });

  it("events grouped by the read they came in (the relay meters a read's usage first); a failing frame ends its read after the events before it", async () => {
    const exception = frame({ ":exception-type": "throttlingException", ":content-type": "application/json", ":message-type": "exception" }, { message: "slow down" });
    async function* body() {
      yield Buffer.concat([chunk({ type: "message_start" }), chunk({ type: "message_delta", usage: { output_tokens: 30 } })]);
      yield Buffer.concat([chunk({ type: "message_stop" }), exception]);
    }
    const reads: string[][] = [];
    const err = await (async () => { for await (const r of anthropicEventReads(body(), "bedrock")) reads.push(r.map((e) => e.event!)); })().catch((e) => e);
    expect(reads).toEqual([["message_start", "message_delta"], ["message_stop"]]);
    expect(err.message).toBe("Provider bedrock failed mid-stream: throttlingException: slow down");
  });
});
