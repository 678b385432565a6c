import { describe, expect, it } from "vitest";
import { failedAttemptOutcome } from "./attempt-outcome.ts";
import { GatewayError, invalidRequest } from "./errors.ts";

describe("failedAttemptOutcome", () => {
  it("an upstream's refusal of the client's request (its 400, 413, 415, 404 about a file the client named) is client_error", () => {
    expect(failedAttemptOutcome(invalidRequest("max_tokens is too large", "max_tokens"), false)).toBe("client_error");
    for (const [status, code] of [[413, "PAYLOAD_TOO_LARGE"], [415, "UNSUPPORTED_MEDIA_TYPE"], [404, "NOT_FOUND"]] as const) {
      expect(failedAttemptOutcome(new GatewayError(status, code, "x"), false)).toBe("client_error");
    }
  });

  it("the provider's or the gateway's failures are errors: 5xx, timeouts, rate limits", () => {
    for (const [status, code] of [[502, "UPSTREAM_ERROR"], [504, "UPSTREAM_TIMEOUT"], [500, "INTERNAL"], [408, "UPSTREAM_TIMEOUT"], [429, "RATE_LIMITED"], [499, "CANCELLED"]] as const) {
      expect(failedAttemptOutcome(new GatewayError(status, code, "x"), false)).toBe("error");
    }
  });

  it("an attempt cut by the request's own abort is cancelled, whatever its error", () => {
    expect(failedAttemptOutcome(new GatewayError(502, "UPSTREAM_ERROR", "x"), true)).toBe("cancelled");
    expect(failedAttemptOutcome(invalidRequest("x"), true)).toBe("cancelled");
  });
});
