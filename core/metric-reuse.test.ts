import { describe, expect, it } from "vitest";
import { Metrics } from "./metrics.ts";

describe("Metrics.counter/gauge/histogram (registeredMetric)", () => {
  it("registers once, then returns the same metric, with the later setup's collect", async () => {
    const metrics = new Metrics();
    let state = { depth: 1 };
    const first = metrics.gauge({ name: "acme_queue_depth", help: "h", collect() { this.set(state.depth); } });
    state = { depth: 7 }; // the next setup's state
    const again = metrics.gauge({ name: "acme_queue_depth", help: "h", collect() { this.set(state.depth * 2); } });
    expect(again).toBe(first);
    expect(await metrics.registry.getSingleMetricAsString("acme_queue_depth")).toContain("acme_queue_depth 14");
  });

  it("keeps a histogram's buckets, whatever order its label names are given in", () => {
    const metrics = new Metrics();
    const h = metrics.histogram({ name: "acme_seconds", help: "h", labelNames: ["a", "b"], buckets: [1, 2] });
    expect(metrics.histogram({ name: "acme_seconds", help: "h", labelNames: ["b", "a"] })).toBe(h);
  });
});
