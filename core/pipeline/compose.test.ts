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
});
