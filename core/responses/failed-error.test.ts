import { describe, expect, it } from "vitest";
import { failedResponseError } from "./failed-error.ts";
import { DO_NOT_RETRY, GatewayError } from "../errors.ts";

describe("failedResponseError: the code a failed Responses stream's response carries", () => {
  it("a failure the gateway marks not retryable is invalid_prompt (Codex CLI stops on it), its message naming the gateway's code and reason", () => {
    const tooLarge = new GatewayError(502, "UPSTREAM_ERROR", "Provider up sent a stream event larger than 9 characters", { retryable: false, headers: DO_NOT_RETRY, details: { reason: "event_too_large" } });
    expect(failedResponseError(tooLarge)).toEqual({ code: "invalid_prompt", message: "Provider up sent a stream event larger than 9 characters (UPSTREAM_ERROR event_too_large; not retryable: the same request fails the same way)" });
    const unavailable = new GatewayError(503, "GUARDRAIL_UNAVAILABLE", "moderation not configured", { headers: DO_NOT_RETRY });
    expect(failedResponseError(unavailable)).toEqual({ code: "invalid_prompt", message: "moderation not configured (GUARDRAIL_UNAVAILABLE; not retryable: the same request fails the same way)" });
  });

  it("a 4xx refusal is invalid_prompt with its own message", () => {
    expect(failedResponseError(new GatewayError(400, "GUARDRAIL_BLOCKED", 'blocked by guardrail "x"'))).toEqual({ code: "invalid_prompt", message: 'blocked by guardrail "x"' });
  });

  it("a transient failure stays what clients retry: rate_limit_exceeded for a 429, server_error otherwise", () => {
    expect(failedResponseError(new GatewayError(429, "RATE_LIMITED", "slow down", { retryable: true }))).toEqual({ code: "rate_limit_exceeded", message: "slow down" });
    expect(failedResponseError(new GatewayError(502, "UPSTREAM_ERROR", "Provider up failed mid-stream: boom", { retryable: true }))).toEqual({ code: "server_error", message: "Provider up failed mid-stream: boom" });
    expect(failedResponseError(new GatewayError(504, "UPSTREAM_TIMEOUT", "too slow"))).toMatchObject({ code: "server_error" });
    expect(failedResponseError(new Error("socket hang up"))).toEqual({ code: "server_error", message: "socket hang up" });
    expect(failedResponseError(undefined)).toEqual({ code: "server_error", message: "upstream failure" });
  });

  it("is context_length_exceeded for an upstream's context overflow, which Codex compacts on", () => {
    const err = new GatewayError(400, "INVALID_REQUEST", "Provider up rejected the request: Your input exceeds the context window of this model.", {
      headers: DO_NOT_RETRY, details: { reason: "context_length_exceeded" },
    });
    expect(failedResponseError(err)).toEqual({ code: "context_length_exceeded", message: err.message });
  });
});
