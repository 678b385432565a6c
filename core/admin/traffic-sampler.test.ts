import { describe, expect, it } from "vitest";
import { Metrics } from "../metrics.ts";
import { setClusterScrape } from "../observability/cluster-scrape.ts";
import { bucketsFromGet, cumulativeBuckets, histogramQuantile, TrafficSampler, wireReading } from "./traffic-sampler.ts";

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

  /** Some traffic on a worker's metrics: n requests (one in five a 429), latency, first byte and tokens. */
  const serve = (m: Metrics, n: number, model = "m") => {
    const labels = { endpoint: "chat", model, provider: "p" };
    for (let i = 0; i < n; i++) {
      m.requests.add(1, "chat", model, "p", i % 5 === 4 ? "429" : "200");
      m.duration.observe(labels, 0.01 * (1 + (i % 40)));
      m.ttfb.observe(labels, 0.005 * (1 + (i % 20)));
    }
    m.tokens.add(10 * n, "input", model, "p");
    m.tokens.add(3 * n, "output", model, "p");
  };
  /** What a traffic gather of `start --workers` hands a worker: every worker's reading, as it crossed the IPC channel. */
  const gathered = async (workers: Metrics[]) => JSON.parse(JSON.stringify(await Promise.all(workers.map((w) => wireReading(w))))) as unknown[];

  it("a cluster of one gives the same steps as one process's own metrics", async () => {
    const m = new Metrics();
    let now = 0;
    const own = new TrafficSampler(m, () => now, () => undefined);
    const fromCluster = new TrafficSampler(m, () => now, () => () => gathered([m]));
    for (let round = 0; round < 3; round++) {
      await own.sample();
      await fromCluster.sample();
      serve(m, 37 * (round + 1), `m${round}`);
      m.inFlight.enter("chat");
      now += 10_000;
    }
    expect(own.scope).toBe("process");
    expect(fromCluster.scope).toBe("cluster");
    expect(fromCluster.points()).toEqual(own.points());
    expect(own.points()[1]).toMatchObject({ requests: 74, ok: 60, client_errors: 14, input_tokens: 740, output_tokens: 222, in_flight: 2 });
  });

  it("under --workers, counts every worker's requests, and a worker that restarts costs one step no negative counts", async () => {
    const workers = [new Metrics(), new Metrics()];
    let now = 0;
    const s = new TrafficSampler(workers[0]!, () => now, () => () => gathered(workers));
    await s.sample();
    serve(workers[0]!, 20);
    serve(workers[1]!, 30);
    now += 10_000;
    await s.sample();
    expect(s.points()[0]).toMatchObject({ requests: 50, ok: 40, client_errors: 10, input_tokens: 500 });
    expect(s.points()[0]!.latency_ms!.p95).toBeGreaterThan(300);

    workers[1] = new Metrics(); // restarted: its counters start from zero
    serve(workers[1], 5);
    now += 10_000;
    await s.sample();
    expect(s.points()[1]).toMatchObject({ requests: 0, ok: 0, client_errors: 0, input_tokens: 0 });
    serve(workers[1], 5);
    now += 10_000;
    await s.sample();
    expect(s.points()[2]).toMatchObject({ requests: 5, ok: 4, client_errors: 1 });
  });

  it("skips a reading the cluster does not answer, and starts over when the source changes", async () => {
    const m = new Metrics();
    let now = 0;
    let scrape: (() => Promise<unknown[]>) | undefined;
    const s = new TrafficSampler(m, () => now, () => scrape);
    await s.sample();
    serve(m, 10);
    now += 10_000;
    await s.sample();
    expect(s.points()).toHaveLength(1);
    expect(s.scope).toBe("process");

    // The worker joined the cluster: the process's step and the cluster's do not subtract.
    scrape = () => gathered([m]);
    now += 10_000;
    await s.sample();
    expect(s.scope).toBe("cluster");
    expect(s.points()).toEqual([]);
    expect(s.startedAt).toBe(now);

    scrape = () => Promise.reject(new Error("no answer from the primary"));
    serve(m, 10);
    now += 10_000;
    await s.sample();
    expect(s.points()).toEqual([]);
    scrape = () => gathered([m]);
    now += 10_000;
    await s.sample();
    expect(s.points()).toEqual([expect.objectContaining({ ms: 20_000, requests: 10 })]);
  });

  // Last: it sets this process's cluster hook, which the default source of a sampler reads.
  it("reads the cluster's figures as soon as the worker joins, even with its first reading still in progress", async () => {
    const m = new Metrics();
    const now = 5_000;
    let readings: (() => Promise<unknown[]>) | undefined;
    const s = new TrafficSampler(m, () => now, () => readings);
    s.start(); // its first reading, this process's, is in progress
    readings = () => gathered([m]);
    setClusterScrape(() => m.registry.metrics(), readings);
    await new Promise((r) => setTimeout(r, 20));
    s.stop();
    expect(s.scope).toBe("cluster");
    expect(s.startedAt).toBe(now);
  });
});
