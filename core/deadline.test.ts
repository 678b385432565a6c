import { describe, expect, it, vi } from "vitest";
import { settleWithin } from "./deadline.ts";

describe("settleWithin", () => {
  it("gives the promise's value when it settles first, and leaves no timer behind", async () => {
    vi.useFakeTimers();
    try {
      const onExpiry = vi.fn(() => "late");
      await expect(settleWithin(Promise.resolve(7), 1000, onExpiry)).resolves.toBe(7);
      expect(vi.getTimerCount()).toBe(0);
      expect(onExpiry).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });

  it("passes the promise's rejection through when it comes first", async () => {
    await expect(settleWithin(Promise.reject(new Error("store down")), 1000, () => "late")).rejects.toThrow("store down");
  });

  it("gives what onExpiry returns once ms pass first", async () => {
    vi.useFakeTimers();
    try {
      const answer = settleWithin(new Promise<number>(() => {}), 300, () => false);
      await vi.advanceTimersByTimeAsync(299);
      let settled = false;
      void answer.then(() => (settled = true));
      await Promise.resolve();
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await expect(answer).resolves.toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it("rejects with what onExpiry throws", async () => {
    await expect(settleWithin(new Promise(() => {}), 5, () => { throw new Error("took longer than 5 ms"); })).rejects.toThrow("took longer than 5 ms");
  });
});
