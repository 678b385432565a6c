import { describe, expect, it } from "vitest";
import { GatewayError } from "./errors.ts";
import { RetryHint } from "./retry-hint.ts";

const failed = (retryAfter?: number) => new GatewayError(502, "UPSTREAM_ERROR", "x", { retryable: true, retryAfter });

describe("RetryHint", () => {
  it("keeps an earlier endpoint's Retry-After when a later one fails without any", () => {
    const h = new RetryHint();
    h.note(0, failed(30), 1_000);
    h.note(1, failed(), 1_500);
    expect(h.seconds(1_500)).toBe(29.5); // 29.5 s left: Retry-After 30, retry-after-ms 29500
  });

  it("tells the soonest time any endpoint named, counted from now", () => {
    const h = new RetryHint();
    h.note(0, failed(30), 0);
    h.note(1, failed(12), 4_000);
    expect(h.seconds(10_000)).toBe(6);
    expect(h.seconds(20_000)).toBe(0);
  });

  it("an endpoint's later answer replaces its earlier hint", () => {
    const h = new RetryHint();
    h.note(0, failed(2), 0);
    h.note(0, failed(40), 2_000);
    expect(h.seconds(2_000)).toBe(40);
    h.note(0, failed(), 3_000);
    expect(h.seconds(3_000)).toBeUndefined();
  });

  it("none named a time: no hint", () => {
    const h = new RetryHint();
    h.note(0, failed(), 0);
    expect(h.seconds(0)).toBeUndefined();
  });
});

describe("RetryHint.last", () => {
  it("keeps each endpoint's own latest failure and its time", () => {
    const h = new RetryHint();
    const limited = failed(30);
    h.note(1, limited, 100);
    h.note(2, failed(), 200);
    expect(h.last(1)).toEqual({ err: limited, at: 100 });
    expect(h.last(2)?.err.retryAfter).toBeUndefined();
    expect(h.last(0)).toBeUndefined();
  });
});
