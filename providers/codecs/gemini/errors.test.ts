import { describe, expect, it } from "vitest";
import { geminiStreamError } from "./errors.ts";

describe("geminiStreamError: a Gemini stream's error judged as the same error sent as an HTTP status", () => {
  it("INVALID_ARGUMENT is the client's 400, not retried", () => {
    expect(geminiStreamError("gem", { code: 400, message: "bad", status: "INVALID_ARGUMENT" })).toMatchObject({ status: 400, code: "INVALID_REQUEST", retryable: false, headers: { "x-should-retry": "false" } });
    // The status name alone says as much.
    expect(geminiStreamError("gem", { message: "bad", status: "INVALID_ARGUMENT" })).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
  });

  it("RESOURCE_EXHAUSTED is a retryable rate limit, its RetryInfo the wait; UNAVAILABLE and INTERNAL stay retryable", () => {
    const limited = { code: 429, message: "slow", status: "RESOURCE_EXHAUSTED", details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "1.5s" }] };
    expect(geminiStreamError("gem", limited)).toMatchObject({ status: 502, retryable: true, retryAfter: 1.5 });
    expect(geminiStreamError("gem", { code: 503, message: "x", status: "UNAVAILABLE" })).toMatchObject({ status: 502, retryable: true });
    expect(geminiStreamError("gem", { message: "x", status: "INTERNAL" })).toMatchObject({ status: 502, retryable: true });
  });

  it("a 400 refusing the gateway's own setup (an unknown API key) is no request error: the next endpoint's", () => {
    const setup = { code: 400, message: "API key not valid.", status: "INVALID_ARGUMENT", details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID" }] };
    expect(geminiStreamError("gem", setup)).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: false });
  });
});
