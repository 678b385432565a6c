import { describe, expect, it } from "vitest";
import { Counter, Gauge, Registry } from "prom-client";
import { CounterCells, InFlightCells } from "./metrics-cells.ts";

function counterWithCells() {
  const registry = new Registry();
  const cells = new CounterCells<"model" | "code">();
  const counter: Counter<"model" | "code"> = new Counter({
    name: "t_total", help: "t", labelNames: ["model", "code"], registers: [registry], collect: (): void => cells.fold(counter),
  });
  const add = (model: string, code: string, n: number) => {
    const key = `${model}\n${code}`;
    (cells.get(key) ?? cells.open(key, { model, code })).pending += n;
  };
  return { registry, add };
}

describe("CounterCells", () => {
  it("shows every sum at each scrape, per label set, and keeps counting after a scrape", async () => {
    const { registry, add } = counterWithCells();
    add("a", "200", 1);
    add("a", "200", 2);
    add("b", "500", 1);
    let text = await registry.metrics();
    expect(text).toContain('t_total{model="a",code="200"} 3');
    expect(text).toContain('t_total{model="b",code="500"} 1');
    add("a", "200", 4);
    text = await registry.metrics();
    expect(text).toContain('t_total{model="a",code="200"} 7');
    expect(text).toContain('t_total{model="b",code="500"} 1');
  });

  it("reads the same through getMetricsAsJSON (what the cluster primary aggregates)", async () => {
    const { registry, add } = counterWithCells();
    add("a", "200", 5);
    const [m] = await registry.getMetricsAsJSON();
    expect(m!.values).toEqual([{ value: 5, labels: { model: "a", code: "200" } }]);
  });
});

describe("InFlightCells", () => {
  it("sets the gauge to the requests open per endpoint when collected", async () => {
    const registry = new Registry();
    const cells = new InFlightCells();
    const gauge: Gauge<"endpoint"> = new Gauge({
      name: "f", help: "f", labelNames: ["endpoint"], registers: [registry], collect: (): void => cells.fold(gauge),
    });
    cells.enter("chat");
    cells.enter("chat");
    cells.enter("messages");
    cells.leave("chat");
    let text = await registry.metrics();
    expect(text).toContain('f{endpoint="chat"} 1');
    expect(text).toContain('f{endpoint="messages"} 1');
    cells.leave("chat");
    cells.leave("messages");
    text = await registry.metrics();
    expect(text).toContain('f{endpoint="chat"} 0');
    expect(text).toContain('f{endpoint="messages"} 0');
  });
});
