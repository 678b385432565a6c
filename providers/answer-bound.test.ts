import { describe, expect, it } from "vitest";
import { AnswerBound } from "./answer-bound.ts";
import { MAX_ANSWER_BYTES } from "./upstream-limits.ts";

const refusal = (f: () => void) => {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
};

describe("AnswerBound", () => {
  it("takes an answer up to its bound, and refuses the piece that goes past it with answer_too_large naming the setting", () => {
    const b = new AnswerBound("up", 10);
    b.add(4);
    b.add(6); // 10: at the bound, still whole
    const e: any = refusal(() => b.add(1));
    expect(e).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: false, details: { provider: "up", reason: "answer_too_large", limit_bytes: 10, setting: "server.upstream_limits.answer_bytes" } });
    expect(e.message).toBe("Provider up streamed an answer larger than 10 bytes, the gateway's bound (server.upstream_limits.answer_bytes raises it); the stream was cut there");
    expect(e.headers).toMatchObject({ "x-should-retry": "false" });
  });

  it("is the JSON answer's bound unless configured", () => {
    const b = new AnswerBound("up");
    expect(b.limit).toBe(MAX_ANSWER_BYTES);
    b.add(MAX_ANSWER_BYTES);
    expect(refusal(() => b.add(1))).toMatchObject({ details: { reason: "answer_too_large", limit_bytes: MAX_ANSWER_BYTES } });
  });
});
