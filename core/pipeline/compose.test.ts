import { describe, expect, it } from "vitest";
import { compose } from "./compose.ts";
import { definePlugin } from "./define.ts";

function step(name: string, log: string[], shortCircuit = false) {
  return {
    def: definePlugin({
      name,
      async handle(_ctx, next) {
        log.push(`${name}>`);
        if (!shortCircuit) await next();
        log.push(`<${name}`);
      },
    }),
    instance: { name, options: undefined, state: undefined },
  };
}

describe("compose", () => {
  it("runs plugins down in order and back up in reverse, terminal last", async () => {
    const log: string[] = [];
    const run = compose([step("a", log), step("b", log)], async () => { log.push("terminal"); });
    await run({} as never);
    expect(log).toEqual(["a>", "b>", "terminal", "<b", "<a"]);
  });

  it("stops at a plugin that returns without next()", async () => {
    const log: string[] = [];
    const run = compose([step("a", log, true), step("b", log)], async () => { log.push("terminal"); });
    await run({} as never);
    expect(log).toEqual(["a>", "<a"]);
  });

  it("refuses a second next() call", async () => {
    const twice = definePlugin({ name: "twice", async handle(_c, next) { await next(); await next(); } });
    const run = compose([{ def: twice, instance: { name: "twice", options: undefined, state: undefined } }], async () => {});
    await expect(run({} as never)).rejects.toThrow(/called next\(\) twice/);
  });

  it("turns a synchronous throw into a rejection and runs a synchronous plugin's next()", async () => {
    const log: string[] = [];
    const sync = definePlugin({ name: "sync", handle(_c, next) { log.push("sync"); return next(); } });
    const boom = definePlugin({ name: "boom", handle() { throw new Error("boom"); } });
    const quiet = definePlugin({ name: "quiet", handle() { log.push("quiet"); } });
    const inst = (name: string) => ({ name, options: undefined, state: undefined });
    const run = compose([{ def: sync, instance: inst("sync") }, { def: boom, instance: inst("boom") }], async () => { log.push("terminal"); });
    const p = run({} as never);
    expect(p).toBeInstanceOf(Promise);
    await expect(p).rejects.toThrow("boom");
    const stop = compose([{ def: sync, instance: inst("sync") }, { def: quiet, instance: inst("quiet") }], async () => { log.push("terminal"); });
    await expect(stop({} as never)).resolves.toBeUndefined();
    expect(log).toEqual(["sync", "sync", "quiet"]);
  });
});
