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

  it("refuses the gateway's own metric by name", () => {
    const metrics = new Metrics();
    expect(() => metrics.counter({ name: "gateway_connections_dropped_total", help: "mine" })).toThrow(
      "metric gateway_connections_dropped_total is the gateway's own (or was registered without gateway.metrics)",
    );
  });
});
