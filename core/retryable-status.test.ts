import { describe, expect, it } from "vitest";
import { UPSTREAM_NOT_FOUND, isRetryableStatus, isRetryableUpstream } from "./retryable-status.ts";

describe("isRetryableStatus", () => {
  it("408, 409, 429 and 5xx are retried; other 4xx are not", () => {
    expect([408, 409, 429, 500, 503, 529].map(isRetryableStatus)).toEqual([true, true, true, true, true, true]);
    expect([400, 401, 403, 404, 413, 422].map(isRetryableStatus)).toEqual([false, false, false, false, false, false]);
  });

  it("a 404 is worth the next endpoint only when it is about the upstream the gateway chose", () => {
    expect(isRetryableUpstream(404, UPSTREAM_NOT_FOUND)).toBe(true);
    expect(isRetryableUpstream(404, undefined)).toBe(false);
    expect(isRetryableUpstream(400, UPSTREAM_NOT_FOUND)).toBe(false);
    expect(isRetryableUpstream(503, undefined)).toBe(true);
  });
});
