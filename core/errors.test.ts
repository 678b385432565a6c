import { describe, expect, it } from "vitest";
import { GatewayError, MAX_RETRY_AFTER_S, retryAfterHeader, toGeminiJSON } from "./errors.ts";

describe("Gemini error rendering", () => {
  it("Google's envelope: HTTP code, RPC status, the gateway code as ErrorInfo, the field as BadRequest, Retry-After as RetryInfo", () => {
    const err = new GatewayError(429, "RATE_LIMITED", "Too many requests", { retryAfter: 2.2, details: { field: "model", limit: { rpm: 1 } } });
    expect(toGeminiJSON(err)).toEqual({ error: { code: 429, message: "Too many requests", status: "RESOURCE_EXHAUSTED", details: [
      { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "RATE_LIMITED", domain: "model-gateway", metadata: { type: "rate_limit_error", field: "model", limit: '{"rpm":1}' } },
      { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field: "model", description: "Too many requests" }] },
      { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "3s" },
    ] } });
    expect(toGeminiJSON(new GatewayError(402, "BUDGET_EXCEEDED", "spent")).error).toMatchObject({ code: 402, status: "RESOURCE_EXHAUSTED", details: [{ reason: "BUDGET_EXCEEDED" }] });
    expect(toGeminiJSON(new GatewayError(502, "UPSTREAM_ERROR", "x")).error.status).toBe("UNAVAILABLE");
  });
});

describe("Retry-After", () => {
  it("an upstream's absurd or malformed value is bounded to MAX_RETRY_AFTER_S and formats as digits only", () => {
    for (const v of [251606556426, 1e297, Infinity]) {
      const e = new GatewayError(502, "UPSTREAM_ERROR", "x", { retryAfter: v });
      expect(e.retryAfter).toBe(MAX_RETRY_AFTER_S);
      expect(retryAfterHeader(e.retryAfter!)).toBe("3600");
    }
    expect(new GatewayError(502, "UPSTREAM_ERROR", "x", { retryAfter: Number.NaN }).retryAfter).toBeUndefined();
    expect(retryAfterHeader(new GatewayError(502, "UPSTREAM_ERROR", "x", { retryAfter: -5 }).retryAfter!)).toBe("0");
    expect(retryAfterHeader(1.2)).toBe("2");
  });
});
