import { describe, expect, it } from "vitest";
import { decodeTime, isValid } from "ulid";
import { generationId, pooledPrng, randomHex, requestId } from "./ids.ts";

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

describe("requestId", () => {
  it("is req_ + 32 hex digits laid out as a UUIDv7: the time in ms first, so ids sort by when they were made", () => {
    const ids = Array.from({ length: 5000 }, (_, i) => requestId(1_790_000_000_000 + i));
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(parseInt(requestId(1_790_000_000_123).slice(4, 16), 16)).toBe(1_790_000_000_123);
    // Within one millisecond the rest is random: 5000 ids of the same ms are all different.
    expect(new Set(Array.from({ length: 5000 }, () => requestId(1_790_000_000_000))).size).toBe(5000);
  });
});

describe("randomHex", () => {
  it("is the asked number of bytes as lowercase hex, every one different across pool refills", () => {
    const hex = Array.from({ length: 5000 }, () => randomHex(12));
    for (const h of hex) expect(h).toMatch(/^[0-9a-f]{24}$/);
    expect(new Set(hex).size).toBe(hex.length);
    // Every hex digit turns up in every position: the bytes are not stuck.
    for (let pos = 0; pos < 24; pos++) expect(new Set(hex.map((h) => h[pos])).size).toBe(16);
  });
});
