import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.ts";
import { MessagesStreamEnd } from "./messages-stream-end.ts";

const blocked = new GatewayError(400, "GUARDRAIL_BLOCKED", 'The answer was blocked by guardrail "no-secrets"');
const ev = (type: string, data: object = {}) => ({ event: type, data: JSON.stringify({ type, ...data }) });
const events = (text: string) => text.split("\n\n").filter(Boolean).map((f) => JSON.parse(f.split("\ndata: ")[1]));

describe("MessagesStreamEnd", () => {
  it("ends a begun message a guardrail blocked: open blocks stopped, the rule's text block, refusal, message_stop", () => {
    const end = new MessagesStreamEnd();
    for (const e of [ev("message_start", { message: { usage: { output_tokens: 3 } } }), ev("content_block_start", { index: 0 }), ev("content_block_stop", { index: 0 }), ev("content_block_start", { index: 1 })]) end.note(e);
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

  it("leaves other failures, a message never begun and one already stopped to the error event", () => {
    const begun = new MessagesStreamEnd();
    begun.note(ev("message_start", { message: {} }));
    expect(begun.refused(new GatewayError(502, "UPSTREAM_ERROR", "cut"))).toBeUndefined();
    expect(new MessagesStreamEnd().refused(blocked)).toBeUndefined();
    begun.note(ev("message_stop"));
    expect(begun.refused(blocked)).toBeUndefined();
  });
});
