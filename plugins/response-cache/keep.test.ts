import { afterEach, describe, expect, it } from "vitest";
import type { GatewayContext, GatewayResponse } from "../../core/pipeline/context.ts";
import type { StoredResponse } from "../../core/store/types.ts";
import { keeping, type CacheState } from "./keep.ts";
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
    const out = keeping(ctx, "k", plan, state, r).response as Extract<GatewayResponse, { kind: "stream" }>;
    // The guardrails holding text back: the delta sent empty, its text later.
    for await (const ev of out.events) ev.data = ev.data.replace("Globex", "");
    const entry = front.get("k", Date.now())!.response as Extract<StoredResponse, { kind: "stream" }>;
    expect(entry.events.map((e) => e.data)).toEqual(['{"choices":[{"delta":{"content":"Globex"}}]}', "[DONE]"]);
  });
});
