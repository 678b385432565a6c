import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";
import { EndpointWindow, HOUR_SLOT_MS, MINUTE_SLOT_MS } from "./window.ts";
import { StatsService } from "./index.ts";
import { RedisStats } from "./redis.ts";

describe("EndpointWindow", () => {
  it("has no numbers before any traffic", () => {
    expect(new EndpointWindow().read(Date.now())).toEqual({ throughput_last_1h: null, latency_last_1h: null, uptime_last_1d: null });
  });

  it("reports TTFT and throughput percentiles and uptime from samples", () => {
    const w = new EndpointWindow();
    const t = 1_000 * HOUR_SLOT_MS;
    for (let i = 1; i <= 100; i++) w.record({ model: "m", provider: "p", ok: i <= 90, ttftMs: i * 10, tokensPerSecond: i }, t);
    const s = w.read(t);
    expect(s.uptime_last_1d).toBe(0.9);
    expect(s.latency_last_1h!.p50).toBeGreaterThan(480);
    expect(s.latency_last_1h!.p50).toBeLessThan(520);
    expect(s.latency_last_1h!.p95).toBeGreaterThan(920);
    expect(s.throughput_last_1h!.p95).toBeGreaterThan(92);
  });

  it("forgets latency after an hour and uptime after a day", () => {
    const w = new EndpointWindow();
    const t = 1_000 * HOUR_SLOT_MS;
    w.record({ model: "m", provider: "p", ok: false, ttftMs: 100 }, t);
    expect(w.read(t + 61 * 60_000).latency_last_1h).toBeNull();
    expect(w.read(t + 61 * 60_000).uptime_last_1d).toBe(0);
    expect(w.read(t + 25 * HOUR_SLOT_MS).uptime_last_1d).toBeNull();
  });

  it("keeps a bounded number of slots however long it runs", () => {
    const w = new EndpointWindow();
    for (let i = 0; i < 2_000; i++) w.record({ model: "m", provider: "p", ok: true, ttftMs: 5 }, i * MINUTE_SLOT_MS);
    expect(w.minutes.size).toBeLessThanOrEqual(12);
    expect(w.hours.size).toBeLessThanOrEqual(24);
  });
});

describe("stats shared through Redis", () => {
  let redis: TestRedis;
  let url = "";
  beforeAll(async () => {
    redis = await startRedis();
    url = redis.url;
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it("two replicas see each other's samples", async () => {
    const prefix = `t${Date.now()}:`;
    const ra = new RedisStats(url, prefix);
    const rb = new RedisStats(url, prefix);
    const a = new StatsService(ra);
    const b = new StatsService(rb);
    try {
      await Promise.all([ra.ready(), rb.ready()]);
      expect(await b.read("openai/x", "one")).toEqual({ throughput_last_1h: null, latency_last_1h: null, uptime_last_1d: null });
      for (let i = 0; i < 10; i++) a.record({ model: "openai/x", provider: "one", ok: true, ttftMs: 200, tokensPerSecond: 50 });
      for (let i = 0; i < 10; i++) b.record({ model: "openai/x", provider: "one", ok: false });
      await a.flush();
      const seen = await b.read("openai/x", "one");
      expect(seen.uptime_last_1d).toBe(0.5);
      expect(seen.latency_last_1h!.p50).toBeGreaterThan(190);
      expect(seen.latency_last_1h!.p50).toBeLessThan(210);
      expect(seen.throughput_last_1h!.p50).toBeGreaterThan(48);
      // the synchronous routing view catches up from Redis
      b.view("openai/x", "one");
      expect(b.view("openai/x", "one").uptime_last_1d).toBe(0.5);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
