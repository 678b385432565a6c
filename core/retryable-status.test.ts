import { describe, expect, it } from "vitest";
import { isRetryableStatus } from "./retryable-status.ts";

describe("isRetryableStatus", () => {
  it("408, 409, 429 and 5xx are retried; other 4xx are not", () => {
    expect([408, 409, 429, 500, 503, 529].map(isRetryableStatus)).toEqual([true, true, true, true, true, true]);
    expect([400, 401, 403, 404, 413, 422].map(isRetryableStatus)).toEqual([false, false, false, false, false, false]);
  });
});
