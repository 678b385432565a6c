import { describe, expect, it } from "vitest";
import { attemptsFor, policyOf, retryDelayMs } from "./policy.ts";

const p = policyOf({ backoff_ms: 100, max_backoff_ms: 1000, max_retry_after_ms: 5000, max_attempts: 4 });
const noJitter = () => 0;

describe("retry policy", () => {
  it("tries every target once, a lone target twice, never above the cap", () => {
    expect(attemptsFor(1, p)).toBe(2);
    expect(attemptsFor(3, p)).toBe(3);
    expect(attemptsFor(9, p)).toBe(4);
    expect(attemptsFor(1, policyOf({ max_attempts: 1 }))).toBe(1);
  });

  it("moves to another endpoint at once", () => {
    expect(retryDelayMs(p, 1, false, 30)).toBe(0);
  });

  it("backs off exponentially on the same endpoint, capped", () => {
    expect(retryDelayMs(p, 1, true, undefined, noJitter)).toBe(100);
    expect(retryDelayMs(p, 2, true, undefined, noJitter)).toBe(200);
    expect(retryDelayMs(p, 9, true, undefined, noJitter)).toBe(1000);
    expect(retryDelayMs(p, 1, true, undefined, () => 1)).toBe(75);
  });

  it("honours Retry-After when it is longer than the backoff, gives up when it is too long", () => {
    expect(retryDelayMs(p, 1, true, 2, noJitter)).toBe(2000);
    expect(retryDelayMs(p, 1, true, 0.01, noJitter)).toBe(100);
    expect(retryDelayMs(p, 1, true, 60, noJitter)).toBeNull();
  });
});
