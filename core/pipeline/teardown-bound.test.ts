import { describe, expect, it } from "vitest";
import { tearDownPlugin } from "./teardown-bound.ts";

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
