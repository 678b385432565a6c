import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.ts";
import { MessagesStreamEnd } from "./messages-stream-end.ts";

const blocked = new GatewayError(400, "GUARDRAIL_BLOCKED", 'The answer was blocked by guardrail "no-secrets"');
const ev = (type: string, data: object = {}) => ({ event: type, data: JSON.stringify({ type, ...data }) });
const events = (text: string) => text.split("\n\n").filter(Boolean).map((f) => JSON.parse(f.split("\ndata: ")[1]));

describe("MessagesStreamEnd", () => {
  it("ends a begun message a guardrail blocked: open blocks stopped, the rule's text block, refusal, message_stop", () => {
    const end = new MessagesStreamEnd();
    for (const e of [ev("message_start", { message: { usage: { output_tokens: 3 } } }), ev("content_block_start", { index: 0, content_block: { type: "text" } }), ev("content_block_stop", { index: 0 }), ev("content_block_start", { index: 1, content_block: { type: "text" } })]) end.note(e);
    expect(events(end.refused(blocked)!)).toEqual([
      { type: "content_block_stop", index: 1 },
      { type: "content_block_start", index: 2, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 2, delta: { type: "text_delta", text: `[${blocked.message}]` } },
      { type: "content_block_stop", index: 2 },
      { type: "message_delta", delta: { stop_reason: "refusal", stop_sequence: null, stop_details: { type: "refusal", category: null, explanation: blocked.message } }, usage: { output_tokens: 3 } },
      { type: "message_stop" },
    ]);
    expect(end.refused(blocked)).toBeUndefined(); // once
  });

  // Claude Code starts a tool at its content_block_stop: closed with its arguments cut short, it ran them and looped.
  it("leaves an open tool call unclosed, closing the thinking and text blocks beside it", () => {
    const end = new MessagesStreamEnd();
    const started = (index: number, type: string) => ev("content_block_start", { index, content_block: { type } });
    for (const e of [ev("message_start", { message: {} }), started(0, "thinking"), started(1, "text"), started(2, "tool_use"), started(3, "server_tool_use")]) end.note(e);
    const sent = events(end.refused(blocked)!);
    expect(sent.filter((e) => e.type === "content_block_stop").map((e) => e.index)).toEqual([0, 1, 4]);
    expect(sent[2]).toMatchObject({ type: "content_block_start", index: 4 });
  });

  it("leaves other failures, a message never begun and one already stopped to the error event", () => {
    const begun = new MessagesStreamEnd();
    begun.note(ev("message_start", { message: {} }));
    expect(begun.refused(new GatewayError(502, "UPSTREAM_ERROR", "cut"))).toBeUndefined();
    expect(new MessagesStreamEnd().refused(blocked)).toBeUndefined();
    begun.note(ev("message_stop"));
    expect(begun.refused(blocked)).toBeUndefined();
  });
});
