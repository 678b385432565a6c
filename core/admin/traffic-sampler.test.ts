import { describe, expect, it } from "vitest";
import { Metrics } from "../metrics.ts";
import { bucketsFromGet, cumulativeBuckets, histogramQuantile, TrafficSampler } from "./traffic-sampler.ts";

const cumulative = (pairs: [number, number][]) => new Map(pairs);

describe("histogramQuantile", () => {
  it("interpolates inside the bucket that holds the rank, like Prometheus's histogram_quantile", () => {
    // 10 below 0.1 s, 10 more below 0.5 s: the median is the 0.1 s bound, p75 halfway into (0.1, 0.5].
    const h = cumulative([[0.1, 10], [0.5, 20], [Infinity, 20]]);
    expect(histogramQuantile(0.5, h)).toBeCloseTo(0.1);
    expect(histogramQuantile(0.75, h)).toBeCloseTo(0.3);
    expect(histogramQuantile(0.25, h)).toBeCloseTo(0.05);
  });

  it("is null without observations, and the largest finite bound for a rank in +Inf", () => {
    expect(histogramQuantile(0.5, cumulative([[0.1, 0], [Infinity, 0]]))).toBeNull();
    expect(histogramQuantile(0.5, new Map())).toBeNull();
    expect(histogramQuantile(0.95, cumulative([[1, 1], [2.5, 1], [Infinity, 10]]))).toBe(2.5);
  });
});

describe("cumulativeBuckets", () => {
  it("reads prom-client's histogram state to the same answer as its get(), +Inf included", async () => {
    const m = new Metrics();
    expect(await cumulativeBuckets(m.duration)).toEqual(new Map([[Infinity, 0]]));
    for (let i = 0; i < 500; i++) m.duration.observe({ endpoint: i % 3 ? "chat" : "messages", model: `m${i % 7}`, provider: "p" }, (i % 50) * 0.013 + (i % 97 === 0 ? 400 : 0));
    const fast = await cumulativeBuckets(m.duration);
    expect(fast.get(Infinity)).toBe(500);
    expect(fast).toEqual(await bucketsFromGet(m.duration));
  });
});

describe("TrafficSampler", () => {
  it("keeps what happened between readings: requests by status class, latency percentiles, tokens", async () => {
    const m = new Metrics();
    let now = 1_000_000;
    const s = new TrafficSampler(m, () => now);
    await s.sample();
    expect(s.points()).toEqual([]);
    const labels = { endpoint: "chat", model: "m", provider: "p" };
    for (let i = 0; i < 8; i++) {
      m.requests.add(1, "chat", "m", "p", "200");
      m.duration.observe(labels, 0.02);
    }
    m.requests.add(1, "chat", "m", "p", "429");
    m.requests.add(1, "chat", "m", "p", "502");
    m.duration.observe(labels, 3);
    m.duration.observe(labels, 3);
    m.tokens.add(100, "input", "m", "p");
    m.tokens.add(40, "output", "m", "p");
    now += 10_000;
    await s.sample();
    const [p] = s.points();
    expect(p).toMatchObject({ t: now, ms: 10_000, requests: 10, ok: 8, client_errors: 1, server_errors: 1, input_tokens: 100, output_tokens: 40, ttfb_ms: null });
    expect(p!.latency_ms!.p50).toBeGreaterThan(10);
    expect(p!.latency_ms!.p50).toBeLessThanOrEqual(25);
    expect(p!.latency_ms!.p95).toBeGreaterThan(2500);

    // The next step holds only what came after: nothing.
    now += 10_000;
    await s.sample();
    expect(s.points()[1]).toMatchObject({ requests: 0, latency_ms: null, input_tokens: 0 });
    expect(s.points(now - 10_000).length).toBe(1);
  });

  it("keeps one hour of steps", async () => {
    let now = 0;
    const s = new TrafficSampler(new Metrics(), () => now);
    for (let i = 0; i < 400; i++) {
      now += 10_000;
      await s.sample();
    }
    expect(s.points().length).toBe(360);
    expect(s.points()[0]!.t).toBe(now - 359 * 10_000);
  });
});
