import { describe, expect, it } from "vitest";
import { ResponsesStreamEnd } from "./responses-stream-end.ts";
import { DO_NOT_RETRY, GatewayError } from "../errors.ts";

const ev = (type: string, payload: Record<string, unknown>, seq: number) => ({ event: type, data: JSON.stringify({ type, sequence_number: seq, ...payload }) });
const RESPONSE = { id: "resp_1", object: "response", status: "in_progress", model: "m", output: [] };
const blocked = new GatewayError(400, "GUARDRAIL_BLOCKED", 'The answer was blocked by guardrail "no-secrets"');

function begun(): ResponsesStreamEnd {
  const s = new ResponsesStreamEnd();
  s.note(ev("response.created", { response: RESPONSE }, 0));
  s.note(ev("response.in_progress", { response: RESPONSE }, 1));
  return s;
}

const dataOf = (text: string) => JSON.parse(text.split("\n").find((l) => l.startsWith("data: "))!.slice(6));

describe("ResponsesStreamEnd", () => {
  it("ends a begun response with response.failed: the items done whole, the open one incomplete, numbered after the last event", () => {
    const s = begun();
    const call = { type: "function_call", id: "fc_1", call_id: "c1", name: "shell", arguments: "{}", status: "completed" };
    s.note(ev("response.output_item.added", { output_index: 0, item: { ...call, arguments: "", status: "in_progress" } }, 2));
    s.note(ev("response.output_item.done", { output_index: 0, item: call }, 3));
    s.note(ev("response.output_item.added", { output_index: 1, item: { type: "message", id: "msg_1", status: "in_progress", role: "assistant", content: [] } }, 4));
    s.note(ev("response.output_text.delta", { output_index: 1, delta: "Here" }, 5));
    const end = s.failed(blocked)!;
    expect(end.text.startsWith("event: response.failed\n")).toBe(true);
    expect(dataOf(end.text)).toEqual({
      type: "response.failed", sequence_number: 6,
      response: {
        ...RESPONSE, status: "failed", error: { code: "invalid_prompt", message: blocked.message }, incomplete_details: null, usage: null,
        output: [call, { type: "message", id: "msg_1", status: "incomplete", role: "assistant", content: [] }],
      },
    });
    expect(end.errorSequence).toBe(7);
    expect(s.failed(blocked)).toBeUndefined(); // once
  });

  it("an upstream's rate limit or fault gets OpenAI's code", () => {
    expect(dataOf(begun().failed(new GatewayError(429, "RATE_LIMITED", "slow down"))!.text).response.error.code).toBe("rate_limit_exceeded");
    expect(dataOf(begun().failed(new GatewayError(504, "UPSTREAM_TIMEOUT", "too slow", { retryable: true }))!.text).response.error.code).toBe("server_error");
  });

  it("a 5xx no retry can change (x-should-retry: false elsewhere) is invalid_prompt, which Codex CLI does not send again; the message names the gateway's code", () => {
    const tooLarge = new GatewayError(502, "UPSTREAM_ERROR", "Provider up streamed an answer larger than 10 bytes", { headers: DO_NOT_RETRY, details: { reason: "answer_too_large" } });
    const { error } = dataOf(begun().failed(tooLarge)!.text).response;
    expect(error.code).toBe("invalid_prompt");
    expect(error.message).toMatch(/^Provider up streamed an answer larger than 10 bytes \(UPSTREAM_ERROR answer_too_large; not retryable/);
  });

  it("adds nothing to a stream that already ended or never began a response", () => {
    const ended = begun();
    ended.note(ev("response.failed", { response: { ...RESPONSE, status: "failed" } }, 2));
    expect(ended.failed(blocked)).toBeUndefined();
    expect(new ResponsesStreamEnd().failed(blocked)).toBeUndefined();
  });
});
