import { describe, expect, it } from "vitest";
import { configFault, DO_NOT_RETRY, GatewayError, geminiHttpStatus, MAX_RETRY_AFTER_S, retryAfterHeader, retryAfterMsHeader, toGeminiJSON } from "./errors.ts";

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

describe("Gemini rendering of an error not to retry", () => {
  it("a 5xx marked x-should-retry: false is 400 FAILED_PRECONDITION (the Gemini SDKs retry on the status alone)", () => {
    const upstream401 = new GatewayError(502, "UPSTREAM_ERROR", "Provider p returned HTTP 401: bad key", { headers: DO_NOT_RETRY, details: { upstream_status: 401 } });
    expect(geminiHttpStatus(upstream401)).toBe(400);
    expect(toGeminiJSON(upstream401).error).toMatchObject({ code: 400, status: "FAILED_PRECONDITION", details: [{ reason: "UPSTREAM_ERROR", metadata: { upstream_status: "401" } }] });
    expect(toGeminiJSON(configFault("No provider is available for m: $K is not set", { model: "m" })).error).toMatchObject({ code: 400, status: "FAILED_PRECONDITION" });
  });

  it("a retryable 5xx and a 4xx keep their own status", () => {
    const transient = new GatewayError(502, "UPSTREAM_ERROR", "x", { retryable: true });
    expect(geminiHttpStatus(transient)).toBe(502);
    expect(toGeminiJSON(transient).error).toMatchObject({ code: 502, status: "UNAVAILABLE" });
    const bad = new GatewayError(400, "INVALID_REQUEST", "x", { headers: DO_NOT_RETRY });
    expect(toGeminiJSON(bad).error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
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
    expect(retryAfterMsHeader(1.5)).toBe("1500"); // retry-after-ms: the same wait, unrounded
    expect(retryAfterMsHeader(1e297)).toBe("3600000");
  });
});
