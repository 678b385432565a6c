import { describe, expect, it } from "vitest";
import { tearDownPlugin, tearDownPlugins } from "./teardown-bound.ts";

const logger = () => {
  const lines: Array<[string, Record<string, unknown> | undefined]> = [];
  return { lines, warn: (msg: string, fields?: Record<string, unknown>) => void lines.push([msg, fields]) };
};

describe("tearDownPlugin", () => {
  it("waits for a teardown that settles, and logs one that throws or rejects with the plugin's name", async () => {
    const log = logger();
    let done = false;
    await tearDownPlugin({ name: "ok", teardown: () => new Promise<void>((r) => setTimeout(() => { done = true; r(); }, 20)) }, log, 1000);
    expect(done).toBe(true);
    await tearDownPlugin({ name: "sync", teardown: () => { throw new Error("boom"); } }, log, 1000);
    await tearDownPlugin({ name: "async", teardown: () => Promise.reject(new Error("nope")) }, log, 1000);
    expect(log.lines).toEqual([
      ["plugin sync teardown failed", { plugin: "sync", error: "Error: boom" }],
      ["plugin async teardown failed", { plugin: "async", error: "Error: nope" }],
    ]);
  });

  it("goes on after the bound when a third-party teardown never settles, naming the plugin", async () => {
    const log = logger();
    const t0 = Date.now();
    await tearDownPlugin({ name: "td", teardown: () => new Promise(() => {}) }, log, 100);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(log.lines).toEqual([["plugin td teardown did not finish within 0.1 s; going on without it", { plugin: "td" }]]);
  });
});

describe("tearDownPlugins", () => {
  it("runs a config's teardowns together under one bound: three that hang cost one bound, each named", async () => {
    const log = logger();
    const order: string[] = [];
    const t0 = Date.now();
    await tearDownPlugins([
      { name: "td1", teardown: () => { order.push("td1"); return new Promise(() => {}); } },
      { name: "quick", teardown: async () => { order.push("quick"); } },
      { name: "td2", teardown: () => { order.push("td2"); return new Promise(() => {}); } },
      { name: "td3", teardown: () => { order.push("td3"); return new Promise(() => {}); } },
      { name: "none", teardown: undefined },
    ], log, 300);
    const took = Date.now() - t0;
    expect(order).toEqual(["td1", "quick", "td2", "td3"]); // each started in pipeline order, without waiting for the last
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(800); // one bound, not three
    expect(log.lines).toEqual(["td1", "td2", "td3"].map((n) => [`plugin ${n} teardown did not finish within 0.3 s; going on without it`, { plugin: n }]));
  });

  it("waits for a built-in's teardown past the bound, and does not wait when every third-party one is done", async () => {
    const log = logger();
    let builtInDone = false;
    const t0 = Date.now();
    await tearDownPlugins([
      { name: "ok", teardown: async () => {} },
      { name: "builtin", trusted: true, teardown: () => new Promise<void>((r) => setTimeout(() => { builtInDone = true; r(); }, 150)) },
    ], log, 50);
    expect(builtInDone).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(log.lines).toEqual([]);
  });
});
