import { describe, expect, it, vi } from "vitest";
import { compose, pluginRunning, pluginThatThrew, streamAbandonment, whenSettled } from "./compose.ts";
import { definePlugin } from "./define.ts";
import { ABANDON_AFTER_MS } from "./abandon.ts";
import { RequestAbort } from "../net/request-abort.ts";

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

describe("compose: a plugin that does not await next() or never returns", () => {
  const inst = (name: string) => ({ name, options: undefined, state: undefined });
  const plugin = (name: string, handle: (ctx: never, next: () => Promise<void>) => Promise<void> | void) => ({ def: definePlugin({ name, handle }), instance: inst(name) });
  const request = () => {
    const abort = new RequestAbort();
    const errors: Array<[string, Record<string, unknown> | undefined]> = [];
    const ctx = { requestId: "r1", signal: abort.signal, gateway: { log: { error: (m: string, f?: Record<string, unknown>) => errors.push([m, f]) } } };
    return { abort, ctx: ctx as never, errors };
  };

  it("fails the request naming the plugin and cancels the rest of the pipeline it left running", async () => {
    const { abort, ctx } = request();
    let cancelled: unknown;
    // The upstream call: answers in 50 ms unless the request's signal is aborted first.
    const terminal = (c: { signal: AbortSignal }) => new Promise<void>((resolve, reject) => {
      const t = setTimeout(resolve, 50);
      c.signal.addEventListener("abort", () => { clearTimeout(t); cancelled = c.signal.reason; reject(c.signal.reason); });
    });
    const run = compose([plugin("outer", async (_c, next) => { await next(); }), plugin("forgetful", async (_c, next) => { void next(); })], terminal as never);
    const err = await run(ctx).then(() => undefined, (e) => e);
    expect(err).toMatchObject({ status: 500, code: "INTERNAL" });
    expect(String(err.cause)).toContain(`plugin "forgetful" returned without awaiting next()`);
    expect(abort.signal.aborted).toBe(true);
    expect(cancelled).toBe(err); // the upstream call was cut (and waited for), not answered
  });

  it("leaves no unhandled rejection when the forgotten rest of the pipeline fails", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (r: unknown) => unhandled.push(r);
    process.on("unhandledRejection", onUnhandled);
    try {
      for (const handle of [
        async (_c: never, next: () => Promise<void>) => { void next(); },
        async (_c: never, next: () => Promise<void>) => { void next(); return next(); },
      ]) {
        const { ctx } = request();
        const run = compose([plugin("forgetful", handle)], async () => { await new Promise((r) => setTimeout(r, 5)); throw new Error('Model "nope/nope" does not exist'); });
        await expect(run(ctx)).rejects.toBeDefined();
      }
      await new Promise((r) => setTimeout(r, 30));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("fails and logs the plugin by name, with its own error, when it throws while its next() is still running", async () => {
    const { ctx, errors } = request();
    const run = compose([plugin("thrower", async (_c, next) => { void next(); throw new Error("own"); })], (c) => new Promise<void>((_r, reject) => (c.signal as AbortSignal).addEventListener("abort", () => reject(new Error("cancelled")))));
    await expect(run(ctx)).rejects.toMatchObject({ status: 500, code: "INTERNAL" });
    expect(errors).toEqual([[expect.stringContaining(`plugin "thrower" returned without awaiting next()`), { plugin: "thrower", requestId: "r1", error: "Error: own" }]]);
  });

  it("stops waiting for a plugin that never returns once the request is aborted, and names it", async () => {
    vi.useFakeTimers();
    try {
      const { abort, ctx, errors } = request();
      const run = compose([plugin("outer", async (_c, next) => { await next(); }), plugin("hang", () => new Promise<void>(() => {}))], async () => {});
      let settled: unknown = "pending";
      run(ctx).then(() => (settled = "resolved"), (e) => (settled = e));
      await vi.advanceTimersByTimeAsync(60_000);
      expect(settled).toBe("pending"); // the client is still there: the request waits
      abort.abort();
      await vi.advanceTimersByTimeAsync(ABANDON_AFTER_MS - 1);
      expect(settled).toBe("pending"); // the pipeline gets its time to unwind
      await vi.advanceTimersByTimeAsync(1);
      expect(String(settled)).toContain(`plugin "hang" had not returned after the request was aborted`);
      expect(errors[0]?.[1]).toMatchObject({ plugin: "hang" });
    } finally {
      vi.useRealTimers();
    }
  });

  it("names the third-party plugin a hang is under, and watches nothing in a pipeline of built-in steps", async () => {
    vi.useFakeTimers();
    try {
      const { abort, ctx } = request();
      // The built-in step under the third-party plugin never returns: the plugin is named, as the one it is under.
      const hangs = { ...plugin("builtin-step", () => new Promise<void>(() => {})), trusted: true };
      const run = compose([plugin("tagger", async (_c, next) => { await next(); }), hangs], async () => {});
      let settled: unknown = "pending";
      run(ctx).then(() => (settled = "resolved"), (e) => (settled = e));
      abort.abort();
      await vi.advanceTimersByTimeAsync(ABANDON_AFTER_MS);
      expect(String(settled)).toContain(`a step below plugin "tagger" had not returned`);
    } finally {
      vi.useRealTimers();
    }
    // Built-in steps only: the chain itself, nothing added to the request.
    const ctx = {} as Record<symbol, unknown>;
    await compose([{ ...step("a", []), trusted: true }, { ...step("b", []), trusted: true }], async () => {})(ctx as never);
    expect(Object.getOwnPropertySymbols(ctx)).toEqual([]);
  });

  it("names, for a stream that does not end, the third-party plugins that wrapped it, not those it passed through", async () => {
    const { ctx, errors } = request();
    const wrap = (name: string) => async (c: any, next: () => Promise<void>) => {
      await next();
      c.response = { ...c.response, events: { [Symbol.asyncIterator]: () => c.response.events[Symbol.asyncIterator]() }, by: name };
    };
    // outer wraps; "looker" only reads the response; a built-in step between them wraps too (it is not named).
    const builtin = { ...plugin("builtin", wrap("builtin")), trusted: true };
    const run = compose([plugin("outer", wrap("outer")), builtin, plugin("looker", async (_c, next) => { await next(); })], async (c: any) => {
      c.response = { kind: "stream", status: 200, events: (async function* () {})() };
    });
    await run(ctx);
    const abandoned = streamAbandonment(ctx)!;
    expect(String(abandoned())).toContain(`the response stream, as wrapped by plugin "outer", had not ended after the request was aborted`);
    expect(errors.at(-1)?.[1]).toMatchObject({ plugin: "outer" });
    // A pipeline of built-in steps: not watched (its streams end when the request is aborted).
    const own = {} as never;
    await compose([{ ...step("a", []), trusted: true }], async () => {})(own);
    expect(streamAbandonment(own)).toBeUndefined();
  });

  it("runs work that waits for the pipeline once an outer plugin has failed after next(), before the failure goes on", async () => {
    const { ctx } = request();
    const seen: unknown[] = [];
    const recorder = { ...plugin("recorder", async (c, next) => {
      expect(whenSettled(c, async (_c, failure) => { seen.push(failure ? String(failure.error) : "answered"); })).toBe(true);
      await next();
    }), trusted: true };
    const run = compose([plugin("late-thrower", async (_c, next) => { await next(); throw new Error("after next"); }), recorder], async () => {});
    await expect(run(ctx)).rejects.toThrow("after next");
    expect(seen).toEqual(["Error: after next"]);
    // Built-in steps only: nothing to wait for, the step does its work at once.
    const own = compose([{ ...plugin("recorder", async (c, next) => { seen.push(whenSettled(c, () => {})); await next(); }), trusted: true }], async () => {});
    await own({} as never);
    expect(seen.at(-1)).toBe(false);
  });

  it("waits as before for a pipeline that unwinds after the abort", async () => {
    const { abort, ctx } = request();
    const log: string[] = [];
    const run = compose([plugin("cleanup", async (_c, next) => { try { await next(); } finally { await new Promise((r) => setTimeout(r, 20)); log.push("cleaned up"); } })], (c) => new Promise<void>((_r, reject) => (c.signal as AbortSignal).addEventListener("abort", () => reject(new Error("cancelled")))));
    const p = run(ctx);
    abort.abort();
    await expect(p).rejects.toThrow("cancelled");
    expect(log).toEqual(["cleaned up"]);
  });
});

describe("compose: which third-party plugin a fault is its", () => {
  const inst = (name: string) => ({ name, options: undefined, state: undefined });
  const plugin = (name: string, handle: (ctx: never, next: () => Promise<void>) => Promise<void> | void, trusted = false) =>
    ({ def: definePlugin({ name, handle }), instance: inst(name), trusted });

  it("names the plugin that threw, not the ones its error passed through, nor a step of the gateway's", async () => {
    const passer = plugin("passer", async (_c, next) => { await next(); });
    const thrower = plugin("thrower", async () => { throw new Error("mine"); });
    const ctx = {} as never;
    const err = await compose([passer, thrower], async () => {})(ctx).catch((e) => e);
    expect(pluginThatThrew(ctx, err)).toBe("thrower");

    const fromBelow = new Error("the gateway's");
    const ctx2 = {} as never;
    const err2 = await compose([passer, plugin("also", async (_c, next) => { await next(); })], async () => { throw fromBelow; })(ctx2).catch((e) => e);
    expect(err2).toBe(fromBelow);
    expect(pluginThatThrew(ctx2, err2)).toBeUndefined();

    const ctx3 = {} as never;
    const str = await compose([passer, plugin("sync", () => { throw "bare"; })], async () => {})(ctx3).catch((e) => e);
    expect(pluginThatThrew(ctx3, str)).toBe("sync");
  });

  it("knows which plugin's code registers a callback: before next(), after it, and not a built-in step's", async () => {
    const seen: Array<[string, string | undefined]> = [];
    const mark = (who: string, ctx: never) => seen.push([who, pluginRunning(ctx)]);
    const outer = plugin("outer", async (ctx, next) => { mark("outer before", ctx); await next(); mark("outer after", ctx); });
    const builtin = plugin("builtin", async (ctx, next) => { mark("builtin before", ctx); await next(); mark("builtin after", ctx); }, true);
    const inner = plugin("inner", async (ctx, next) => { mark("inner before", ctx); await next(); mark("inner after", ctx); });
    await compose([outer, builtin, inner], async (ctx) => { await new Promise((r) => setTimeout(r, 5)); mark("terminal", ctx as never); })({} as never);
    expect(seen).toEqual([
      ["outer before", "outer"], ["builtin before", undefined], ["inner before", "inner"], ["terminal", undefined],
      ["inner after", "inner"], ["builtin after", undefined], ["outer after", "outer"],
    ]);
  });
});
