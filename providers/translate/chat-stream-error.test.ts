import { describe, expect, it } from "vitest";
import { throwIfChatStreamError } from "./chat-stream-error.ts";

const thrown = (chunk: unknown) => {
  try {
    throwIfChatStreamError(chunk, "up");
  } catch (e) {
    return e;
  }
  return undefined;
};

describe("throwIfChatStreamError: an error chunk judged as the same error sent as an HTTP status", () => {
  it("passes a chunk without error", () => {
    expect(thrown({ choices: [{ index: 0, delta: { content: "Hi" } }] })).toBeUndefined();
  });

  it("an invalid_request_error (context length, a bad parameter) is the client's 400: not retried, the field named", () => {
    const err = thrown({ error: { message: "This model's maximum context length is 128000 tokens.", type: "invalid_request_error", code: "context_length_exceeded", param: "messages" } });
    expect(err).toMatchObject({
      status: 400, code: "INVALID_REQUEST", retryable: false, headers: { "x-should-retry": "false" },
      message: "Provider up rejected the request: This model's maximum context length is 128000 tokens.",
      details: { provider: "up", field: "messages", upstream_error: { code: "context_length_exceeded" } },
    });
  });

  it("a host that puts the HTTP status in `code` (OpenRouter) is read by it", () => {
    expect(thrown({ error: { code: 400, message: "Input too long" } })).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
    expect(thrown({ error: { code: 502, message: "Provider returned error" } })).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true });
  });

  it("server errors, rate limits and unnamed errors stay worth another try; insufficient_quota goes elsewhere only", () => {
    for (const error of [{ type: "server_error", message: "boom" }, { type: "tokens", code: "rate_limit_exceeded", message: "slow" }, { message: "no name" }]) {
      expect(thrown({ error })).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, message: `Provider up failed mid-stream: ${error.message}` });
    }
    expect(thrown({ error: { type: "insufficient_quota", code: "insufficient_quota", message: "You exceeded your current quota" } }))
      .toMatchObject({ status: 502, retryable: false, headers: { "x-should-retry": "false" }, details: { reason: "out_of_credit" } });
  });
});
