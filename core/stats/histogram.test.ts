import { describe, expect, it } from "vitest";
import { add, merge, percentiles, quantile, type Counts } from "./histogram.ts";

describe("log histogram", () => {
  it("is empty -> null, never a made-up number", () => {
    expect(quantile(new Map(), 0.5)).toBeNull();
    expect(percentiles(new Map())).toBeNull();
  });

  it("quantiles are within a few percent of the exact ones", () => {
    const c: Counts = new Map();
    for (let i = 1; i <= 1000; i++) add(c, i);
    expect(quantile(c, 0.5)! / 500).toBeGreaterThan(0.97);
    expect(quantile(c, 0.5)! / 500).toBeLessThan(1.03);
    expect(quantile(c, 0.95)! / 950).toBeGreaterThan(0.97);
    expect(quantile(c, 0.95)! / 950).toBeLessThan(1.03);
  });

  it("stays bounded whatever the traffic", () => {
    const c: Counts = new Map();
    for (let i = 0; i < 100_000; i++) add(c, Math.random() * 60_000);
    expect(c.size).toBeLessThan(500);
  });

  it("merges by adding counts", () => {
    const a: Counts = new Map();
    const b: Counts = new Map();
    for (let i = 0; i < 10; i++) add(a, 100);
    for (let i = 0; i < 30; i++) add(b, 1000);
    merge(a, b);
    expect(quantile(a, 0.5)!).toBeGreaterThan(900);
    expect(quantile(a, 0.2)!).toBeLessThan(110);
  });

  it("ignores negative and non-finite values", () => {
    const c: Counts = new Map();
    add(c, -1);
    add(c, NaN);
    add(c, Infinity);
    expect(c.size).toBe(0);
  });
});
