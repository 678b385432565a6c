import { describe, expect, it } from "vitest";
import { decodeTime, isValid } from "ulid";
import { generationId, pooledPrng } from "./ids.ts";

describe("generationId", () => {
  it("is gen_ + a valid, time-ordered ULID, unique across many calls", () => {
    const before = Date.now();
    const ids = Array.from({ length: 5000 }, generationId);
    for (const id of ids.slice(0, 50)) {
      expect(id).toMatch(/^gen_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(isValid(id.slice(4))).toBe(true);
      expect(decodeTime(id.slice(4))).toBeGreaterThanOrEqual(before);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("draws fractions in [0, 1) across pool refills", () => {
    for (let i = 0; i < 10_000; i++) {
      const x = pooledPrng();
      expect(x >= 0 && x < 1).toBe(true);
    }
  });
});
