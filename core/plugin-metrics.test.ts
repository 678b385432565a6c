import { describe, expect, it } from "vitest";
import { Metrics } from "./metrics.ts";

const logger = () => {
  const lines: Array<[string, Record<string, unknown> | undefined]> = [];
  return { lines, warn: (msg: string, fields?: Record<string, unknown>) => void lines.push([msg, fields]) };
};

describe("PluginMetrics", () => {
  it("keeps a metric while a config whose plugin took it serves, and unregisters it after the last one", async () => {
    const metrics = new Metrics();
    const log = logger();
    const [first, second] = [{}, {}];
    metrics.plugins.setUp({ owner: first, plugin: "p", log }, () => metrics.counter({ name: "acme_seen_total", help: "h" }).inc());
    // The next config keeps the plugin; its setup takes the metric after an await.
    await metrics.plugins.setUp({ owner: second, plugin: "p", log }, async () => {
      await Promise.resolve();
      metrics.counter({ name: "acme_seen_total", help: "h" }).inc();
    });
    metrics.plugins.release(first);
    expect(await metrics.registry.metrics()).toContain("acme_seen_total 2");
    metrics.plugins.release(second);
    expect(await metrics.registry.metrics()).not.toContain("acme_seen_total");
  });

  it("answers a scrape without the metric whose collect throws, logging it once, naming the plugin", async () => {
    const metrics = new Metrics();
    const log = logger();
    metrics.plugins.setUp({ owner: {}, plugin: "q", log }, () =>
      metrics.gauge({ name: "acme_depth", help: "h", collect() { throw new Error("gone"); } }));
    const text = await metrics.registry.metrics();
    expect(text).toContain("gateway_connections_dropped_total");
    expect(text).not.toMatch(/^acme_depth /m);
    await metrics.registry.getMetricsAsJSON(); // what a --workers worker sends
    expect(log.lines).toEqual([["plugin q metric acme_depth could not be collected; it is left out of this scrape", { plugin: "q", metric: "acme_depth", error: "Error: gone" }]]);
  });

  it("refuses the gateway's own metric by name, and any gateway_ name before the gateway registers it", () => {
    const metrics = new Metrics();
    expect(() => metrics.counter({ name: "gateway_connections_dropped_total", help: "mine" })).toThrow(
      "metric gateway_connections_dropped_total: the gateway_ prefix is the gateway's own",
    );
    expect(() => metrics.counter({ name: "gateway_trace_spans_total", help: "mine" })).toThrow(
      "metric gateway_trace_spans_total: the gateway_ prefix is the gateway's own",
    );
  });

  it("goes back to the serving config's collect when a config that never served (a refused reload) is let go", async () => {
    const metrics = new Metrics();
    const log = logger();
    const [serving, refused] = [{}, {}];
    const pool = (n: number, closed: { v: boolean }) => () => metrics.gauge({ name: "acme_pool", help: "h", collect() { if (closed.v) throw new Error("closed"); this.set(n); } });
    metrics.plugins.setUp({ owner: serving, plugin: "p", log }, pool(3, { v: false }));
    const refusedClosed = { v: false };
    metrics.plugins.setUp({ owner: refused, plugin: "p", log }, pool(7, refusedClosed));
    metrics.plugins.release(refused);
    refusedClosed.v = true; // its teardown
    expect(await metrics.registry.metrics()).toContain("acme_pool 3");
    expect(log.lines).toEqual([]);
  });

  it("ignores a setup that finishes after its config was let go (a setup past its time bound): the serving collect stays, nothing is kept", async () => {
    const metrics = new Metrics();
    const log = logger();
    const [serving, late] = [{}, {}];
    metrics.plugins.setUp({ owner: serving, plugin: "p", log }, () => metrics.gauge({ name: "acme_pool", help: "h", collect() { this.set(3); } }));
    const closed = { v: false };
    let finish!: () => void;
    const lateSetup = metrics.plugins.setUp({ owner: late, plugin: "p", log }, async () => {
      await new Promise<void>((resolve) => { finish = resolve; });
      metrics.gauge({ name: "acme_pool", help: "h", collect() { if (closed.v) throw new Error("closed"); this.set(7); } });
      metrics.counter({ name: "acme_late_total", help: "h" }).inc();
    });
    metrics.plugins.release(late); // its reload was refused when the setup ran past its bound
    finish();
    await lateSetup;
    closed.v = true; // its late teardown
    const text = await metrics.registry.metrics();
    expect(text).toContain("acme_pool 3");
    expect(text).not.toContain("acme_late_total");
    expect(log.lines).toEqual([]);
    metrics.plugins.release(serving);
    expect(await metrics.registry.metrics()).not.toContain("acme_pool");
  });

  it("once the setups are done (no taker), a late take of a held gauge keeps the serving collect and stays releasable", async () => {
    const metrics = new Metrics();
    const log = logger();
    const serving = {};
    metrics.plugins.setUp({ owner: serving, plugin: "p", log }, () => metrics.gauge({ name: "acme_pool", help: "h", collect() { this.set(3); } }));
    metrics.plugins.setupsDone();
    metrics.gauge({ name: "acme_pool", help: "h", collect() { throw new Error("closed"); } });
    expect(await metrics.registry.metrics()).toContain("acme_pool 3");
    metrics.plugins.release(serving);
    expect(await metrics.registry.metrics()).not.toContain("acme_pool");
  });

  it("at shutdown keeps the metrics and stops the collects, the gauge's last value kept", async () => {
    const metrics = new Metrics();
    const log = logger();
    const owner = {};
    const closed = { v: false };
    metrics.plugins.setUp({ owner, plugin: "p", log }, () => {
      metrics.counter({ name: "acme_done_total", help: "h" }).inc(2);
      metrics.gauge({ name: "acme_open", help: "h", collect() { if (closed.v) throw new Error("closed"); this.set(5); } });
    });
    expect(await metrics.registry.metrics()).toContain("acme_open 5");
    metrics.plugins.freeze(owner);
    closed.v = true; // its teardown
    const text = await metrics.registry.metrics();
    expect(text).toContain("acme_done_total 2");
    expect(text).toContain("acme_open 5");
    expect(log.lines).toEqual([]);
  });
});
