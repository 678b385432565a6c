import { describe, expect, it } from "vitest";
import { judgeHeap, judgeRss, theilSenSlope, type Point } from "./verdict.ts";

// 10 minutes sampled every 10 s.
const series = (f: (t: number, i: number) => number): Point[] => Array.from({ length: 61 }, (_, i) => ({ t: i * 10, v: f(i * 10, i) }));
// Warm-up ramp to a plateau of 150 MB, then GC sawtooth of ±8 MB.
const healthy = (t: number, i: number) => (t < 90 ? 60 + t : 150) + (i % 4 === 0 ? 8 : i % 4 === 2 ? -8 : 0);

describe("soak leak criterion", () => {
  it("a plateau with GC noise, one spike and a one-off step in the third quarter passes", () => {
    const pts = series((t, i) => healthy(t, i) + (i === 50 ? 60 : 0) + (t >= 400 ? 12 : 0));
    const v = judgeRss(pts, 600, 2, 1.3);
    expect(v.judged).toBe(true);
    expect(v.failures).toEqual([]);
  });

  it("a leak of 3 MB/min after warm-up fails on the slope", () => {
    const v = judgeRss(series((t, i) => healthy(t, i) + (t > 90 ? ((t - 90) / 60) * 3 : 0)), 600, 2, 1.3);
    expect(v.slope).toBeGreaterThan(2);
    expect(v.failures.some((f) => f.includes("MB/min"))).toBe(true);
  });

  it("a leak that grew early and slowly since fails on growth", () => {
    const v = judgeRss(series((t) => (t <= 120 ? 100 : 100 + (t - 120) * 0.15)), 600, 100, 1.3);
    expect(v.growth).toBeGreaterThan(1.3);
    expect(v.failures.some((f) => f.includes("x RSS at 120 s"))).toBe(true);
  });

  it("runs shorter than 4 minutes are reported, not judged", () => {
    const v = judgeRss(series((t) => t).slice(0, 7), 60, 1, 1.3);
    expect(v.judged).toBe(false);
    expect(v.failures).toEqual([]);
  });

  it("Theil–Sen ignores a single outlier", () => {
    const pts = series((t) => t / 60).map((p, i) => (i === 30 ? { ...p, v: 1000 } : p));
    expect(theilSenSlope(pts) * 60).toBeCloseTo(1, 5);
  });

  it("live heap: bytes kept per request between the mark and the end, judged from 4 minutes", () => {
    const MB = 1048576;
    expect(judgeHeap(27 * MB, 28 * MB, 60_000, 600, 100).failures).toEqual([]); // ~17 bytes per request
    const leak = judgeHeap(27 * MB, 27 * MB + 60_000 * 1024, 60_000, 600, 100);
    expect(leak.perRequest).toBe(1024);
    expect(leak.failures[0]).toMatch(/1024 bytes per request > 100/);
    expect(judgeHeap(27 * MB, 40 * MB, 1000, 60, 100).failures).toEqual([]);
    expect(judgeHeap(27 * MB, NaN, 1000, 600, 100).failures[0]).toMatch(/not measured/);
  });
});
