import { describe, expect, it } from "vitest";
import { retryAfterSeconds, upstreamError } from "./http.ts";

describe("upstreamError", () => {
  it("maps 5xx and 429 to a retryable 502 carrying the provider's message and Retry-After", () => {
    const e = upstreamError("openai", 429, { "retry-after": "7" }, '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}');
    expect(e).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, retryAfter: 7 });
    expect(e.message).toContain("Rate limit reached");
    expect(e.details).toMatchObject({ provider: "openai", upstream_status: 429, upstream_error: { code: "rate_limit_exceeded" } });
  });

  it("maps 408 and 504 to UPSTREAM_TIMEOUT, and request errors to a non-retryable 502 with x-should-retry: false", () => {
    expect(upstreamError("p", 504, {}, "gateway timeout")).toMatchObject({ status: 504, code: "UPSTREAM_TIMEOUT", retryable: true });
    const bad = upstreamError("p", 400, {}, '{"error":{"message":"bad param"}}');
    expect(bad).toMatchObject({ status: 502, retryable: false, headers: { "x-should-retry": "false" } });
  });

  it("keeps a non-JSON body as the message", () => {
    expect(upstreamError("p", 503, {}, "<html>Service Unavailable</html>").message).toContain("<html>Service Unavailable</html>");
  });
});

describe("retryAfterSeconds", () => {
  it("prefers retry-after-ms, then seconds, then an HTTP date", () => {
    expect(retryAfterSeconds({ "retry-after-ms": "1500", "retry-after": "9" })).toBe(1.5);
    expect(retryAfterSeconds({ "retry-after": "3" })).toBe(3);
    const inTwo = new Date(Date.now() + 2000).toUTCString();
    expect(retryAfterSeconds({ "retry-after": inTwo })).toBeGreaterThan(0);
    expect(retryAfterSeconds({})).toBeUndefined();
  });
});
