import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.ts";
import { geminiBlockedEnding } from "./gemini-stream-end.ts";

describe("geminiBlockedEnding", () => {
  it("ends a guardrail's block as Google's filters end an answer: a SAFETY candidate whose finishMessage and text name the rule", () => {
    const err = new GatewayError(400, "GUARDRAIL_BLOCKED", 'The answer was blocked by guardrail "no-secrets"', { details: { rule: "no-secrets", on: "output" } });
    const frame = geminiBlockedEnding(err)!;
    expect(frame.startsWith("data: ") && frame.endsWith("\r\n\r\n")).toBe(true);
    expect(JSON.parse(frame.slice(6))).toEqual({
      candidates: [{
        content: { role: "model", parts: [{ text: '\n\n[The answer was blocked by guardrail "no-secrets"]' }] },
        finishReason: "SAFETY",
        finishMessage: 'The answer was blocked by guardrail "no-secrets"',
        index: 0,
      }],
    });
  });

  it("has no ending for any other failure (an upstream's, a deadline, a guardrail that could not judge): those streams are cut", () => {
    expect(geminiBlockedEnding(new GatewayError(502, "UPSTREAM_ERROR", "Provider anthropic closed the stream"))).toBeUndefined();
    expect(geminiBlockedEnding(new GatewayError(504, "UPSTREAM_TIMEOUT", "sent nothing more"))).toBeUndefined();
    expect(geminiBlockedEnding(new GatewayError(503, "GUARDRAIL_UNAVAILABLE", 'Guardrail "moderation" could not check the answer'))).toBeUndefined();
  });
});
