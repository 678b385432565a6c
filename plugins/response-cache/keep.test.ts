import { afterEach, describe, expect, it } from "vitest";
import type { GatewayContext, GatewayResponse } from "../../core/pipeline/context.ts";
import type { StoredResponse } from "../../core/store/types.ts";
import { keepOnceSent, keeping, type CacheState } from "./keep.ts";
import { Front } from "./front.ts";
import { toServe } from "./copy.ts";
import type { CachePlan } from "./plan.ts";

const plan = { ttlMs: 60_000 } as CachePlan;
const written: string[] = [];
const writes: string[] = [];

function setup(maxEntryBytes = 1_000_000) {
  const front = new Front(10_000_000);
  const counter = { add: (_n: number, _e: string, result: string) => void writes.push(result) };
  const state = { settings: { maxEntryBytes }, front, metrics: { writes: counter, requests: counter } } as unknown as CacheState;
  const ctx = {
    endpoint: "embeddings", protocol: "openai", requestId: "req_1", responseHeaders: {},
    gateway: { store: { responseCache: { put: (_k: string, text: string) => (written.push(text), Promise.resolve()) } }, log: { debug() {} } },
  } as unknown as GatewayContext;
  return { front, state, ctx };
}

const answer = () => ({ kind: "json" as const, status: 200, body: { object: "list", data: [{ embedding: [0.1, 0.2] }] } });

afterEach(() => {
  written.length = 0;
  writes.length = 0;
});

describe("keeping a JSON answer", () => {
  it("keeps the answer itself, no copy (nothing edits a kept answer)", () => {
    const { front, state, ctx } = setup();
    const r = answer();
    keeping(ctx, "k", plan, state, r).save!();
    expect((front.get("k", Date.now())!.response as { body: unknown }).body).toBe(r.body);
    expect(written[0]).toContain('"object":"list"');
  });

  it("keeps nothing of an answer too large to keep, and counts it", () => {
    const { front, state, ctx } = setup(50);
    const kept = keeping(ctx, "k", plan, state, answer());
    expect(kept.save).toBeUndefined();
    expect(front.get("k", Date.now())).toBeUndefined();
    expect(writes).toEqual(["too_large"]);
  });
});

describe("a hit's answer", () => {
  const kept: StoredResponse = { kind: "json", status: 200, headers: {}, body: { text: "kept" } };

  it("is the kept one itself when nothing after the cache edits it, and a copy when something does", () => {
    expect(toServe(kept, false)).toBe(kept);
    const copy = toServe(kept, true) as Extract<StoredResponse, { kind: "json" }>;
    expect(copy).toEqual(kept);
    expect(copy.body).not.toBe((kept as { body: unknown }).body);
  });
});

// The answer a stream recording hands on is unaffected by what steps after do to the events it passes.
describe("keeping a stream", () => {
  it("records the events as passed on, before a step after rewrites them", async () => {
    const { front, state, ctx } = setup();
    (ctx as { protocol: string }).protocol = "openai";
    const events = [{ data: '{"choices":[{"delta":{"content":"Globex"}}]}' }, { data: "[DONE]" }];
    const r: GatewayResponse = { kind: "stream", status: 200, events: (async function* () { yield* events; })() };
    const kept = keeping(ctx, "k", plan, state, r);
    const out = kept.response as Extract<GatewayResponse, { kind: "stream" }>;
    // The guardrails holding text back: the delta sent empty, its text later.
    for await (const ev of out.events) ev.data = ev.data.replace("Globex", "");
    kept.save!();
    const entry = front.get("k", Date.now())!.response as Extract<StoredResponse, { kind: "stream" }>;
    expect(entry.events.map((e) => e.data)).toEqual(['{"choices":[{"delta":{"content":"Globex"}}]}', "[DONE]"]);
  });
});

// The guardrails after the recording judge a stream at its end: on Gemini, which has no last event, after the
// provider's stream (and so the recording) has ended. The stream is kept only once the one the client reads ends uncut.
describe("keeping a stream once it has been sent", () => {
  const gemini = [{ data: '{"candidates":[{"content":{"parts":[{"text":"kill it"}]},"finishReason":"STOP"}]}' }];

  /** The stream recorded, then checked by `check` (the guardrails' stream over the recording), kept once sent. */
  function sent(check: (events: AsyncIterable<{ data: string }>) => AsyncGenerator<{ data: string }>) {
    const { front, state, ctx } = setup();
    (ctx as { protocol: string }).protocol = "gemini";
    const r: GatewayResponse = { kind: "stream", status: 200, events: (async function* () { yield* gemini; })() };
    const kept = keeping(ctx, "k", plan, state, r);
    const recorded = kept.response as Extract<GatewayResponse, { kind: "stream" }>;
    ctx.response = { ...recorded, events: check(recorded.events) };
    keepOnceSent(ctx, kept);
    return { front, events: (ctx.response as Extract<GatewayResponse, { kind: "stream" }>).events };
  }

  it("is not kept when the check cuts it after the provider's stream ended (Gemini output moderation)", async () => {
    const { front, events } = sent(async function* (events) {
      yield* events;
      throw new Error("GUARDRAIL_BLOCKED"); // the verdict at the end
    });
    await expect((async () => { for await (const _ of events); })()).rejects.toThrow("GUARDRAIL_BLOCKED");
    expect(front.get("k", Date.now())).toBeUndefined();
    expect(written).toEqual([]);
  });

  it("is not kept when the client leaves before its end", async () => {
    const { front, events } = sent(async function* (events) {
      yield* events;
    });
    for await (const _ of events) break;
    expect(front.get("k", Date.now())).toBeUndefined();
  });

  it("is kept once the checked stream has ended uncut", async () => {
    const { front, events } = sent(async function* (events) {
      yield* events;
    });
    for await (const _ of events);
    const entry = front.get("k", Date.now())!.response as Extract<StoredResponse, { kind: "stream" }>;
    expect(entry.events).toEqual(gemini);
    expect(written).toHaveLength(1);
  });
});
