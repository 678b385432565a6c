import { describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { CellCounter, InFlightGauge } from "./metrics-cells.ts";

const counter = () => {
  const registry = new Registry();
  const c = new CellCounter({ name: "t_total", help: "t", labelNames: ["model", "code"], registers: [registry] });
  return { registry, c };
};

describe("CellCounter", () => {
  it("shows every sum at each scrape, per label set, and keeps counting after a scrape", async () => {
    const { registry, c } = counter();
    c.add(1, "a", "200");
    c.add(2, "a", "200");
    c.add(1, "b", "500");
    let text = await registry.metrics();
    expect(text).toContain('t_total{model="a",code="200"} 3');
    expect(text).toContain('t_total{model="b",code="500"} 1');
    c.add(4, "a", "200");
    text = await registry.metrics();
    expect(text).toContain('t_total{model="a",code="200"} 7');
    expect(text).toContain('t_total{model="b",code="500"} 1');
  });

  it("reads the same through getMetricsAsJSON (what the cluster primary aggregates)", async () => {
    const { registry, c } = counter();
    c.add(5, "a", "200");
    const [m] = await registry.getMetricsAsJSON();
    expect(m!.values).toEqual([{ value: 5, labels: { model: "a", code: "200" } }]);
  });
});

describe("CellCounter.seed", () => {
  it("shows seeded sets at 0 before their first count; a later seeding drops the zeros it no longer names, never a counted series", async () => {
    const { registry, c } = counter();
    c.seed([["a", "200"], ["b", "200"], ["c", "200"]]);
    let text = await registry.metrics();
    for (const m of ["a", "b", "c"]) expect(text).toContain(`t_total{model="${m}",code="200"} 0`);
    c.add(2, "b", "200");
    c.seed([["a", "200"]]);
    text = await registry.metrics();
    expect(text).toContain('t_total{model="a",code="200"} 0');
    expect(text).toContain('t_total{model="b",code="200"} 2'); // counted: stays, as any counter does
    expect(text).not.toContain('model="c"');
  });
});

describe("CellCounter given figures from an upstream", () => {
  it("never adds a negative, NaN or infinite count: /metrics keeps scraping and the sum never goes down", async () => {
    const { registry, c } = counter();
    c.add(3, "a", "200");
    c.add(-100000, "a", "200");
    c.add(Number.NaN, "a", "200");
    c.add(Infinity, "a", "200");
    c.add(-1, "b", "200");
    const text = await registry.metrics(); // prom-client threw "It is not possible to decrease a counter" here
    expect(text).toContain('t_total{model="a",code="200"} 3');
    expect(text).not.toContain('model="b"');
    c.add(2, "a", "200");
    expect(await registry.metrics()).toContain('t_total{model="a",code="200"} 5');
  });
});

describe("InFlightGauge", () => {
  it("sets the gauge to the requests open per endpoint when collected", async () => {
    const registry = new Registry();
    const g = new InFlightGauge({ name: "f", help: "f", registers: [registry] });
    g.enter("chat");
    g.enter("chat");
    g.enter("messages");
    g.leave("chat");
    let text = await registry.metrics();
    expect(text).toContain('f{endpoint="chat"} 1');
    expect(text).toContain('f{endpoint="messages"} 1');
    g.leave("chat");
    g.leave("messages");
    text = await registry.metrics();
    expect(text).toContain('f{endpoint="chat"} 0');
    expect(text).toContain('f{endpoint="messages"} 0');
  });
});
