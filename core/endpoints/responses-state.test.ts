// The per-attempt seam of serveWithState: which body each attempt gets, what the record says, and the save.
import { describe, expect, it } from "vitest";
import { serveWithState } from "./responses-state.ts";
import { MemoryResponseStore } from "../store/responses-memory.ts";
import type { ResponseRecord } from "../store/responses-types.ts";
import type { ProviderDriver, Target } from "../contracts/provider.ts";

/** A live key's view of a project's stored responses. */
const live = (project: string) => ({ project, sandbox: false });

const ok = async () => ({ kind: "json" as const, body: {} });
const nativeDriver = { name: "nat", protocol: "openai", chat: ok, responses: ok } as unknown as ProviderDriver;
const chatDriver = { name: "cc", protocol: "openai", chat: ok } as unknown as ProviderDriver;
const target = (provider: string, nativeResponses: boolean): Target => ({ modelId: "m", provider, upstreamModel: "m", pricing: {}, ...(nativeResponses ? { nativeResponses } : {}) });

function fakeCtx(store: MemoryResponseStore, body: any, errors: unknown[] = []) {
  return {
    body, auth: { projectId: "acme" }, config: { raw: { store: { responses_retention_days: 1 } } }, requestId: "req_1",
    gateway: { store: { responses: store }, log: { error: (...a: unknown[]) => errors.push(a) } }, model: { id: "m" },
  } as any;
}

const prevRecord = (native: boolean): ResponseRecord => ({
  id: "resp_prev", project: "acme", createdAt: Date.now(), expiresAt: Date.now() + 60_000, provider: "nat", model: "m", native, previousResponseId: null,
  input: [{ id: "msg_1", type: "message", role: "user", content: [{ type: "input_text", text: "Hi" }] }],
  response: { id: "resp_prev", object: "response", status: "completed", output: [{ id: "rs_1", type: "reasoning", summary: [] }, { id: "msg_2", type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello" }] }] },
});

/** Runs serveWithState with a dispatch that tries each attempt in turn; the last one answers. */
async function run(store: MemoryResponseStore, body: any, attempts: [ProviderDriver, Target][], errors: unknown[] = []) {
  const ctx = fakeCtx(store, body, errors);
  const seen: any[] = [];
  await serveWithState(ctx, async () => {
    for (const [driver, t] of attempts) {
      await ctx.invoke(ctx, driver, "responses", t, {});
      seen.push(ctx.body);
    }
    const [, t] = attempts.at(-1)!;
    ctx.resolvedTarget = t;
    ctx.resolvedProvider = t.provider;
    ctx.response = { kind: "json", status: 200, body: { id: "resp_new", object: "response", status: "completed", previous_response_id: null, store: body.store ?? true, output: [] } };
  });
  return { ctx, seen };
}

describe("serveWithState per attempt", () => {
  it("native previous: the same native provider gets previous_response_id; a translated fallback the rebuilt conversation", async () => {
    const store = new MemoryResponseStore();
    await store.put(prevRecord(true));
    const body = { model: "m", previous_response_id: "resp_prev", input: "Again" };
    const { ctx, seen } = await run(store, body, [[nativeDriver, target("nat", true)], [chatDriver, target("cc", false)]]);
    expect(seen[0]).toBe(body);
    expect(seen[1].previous_response_id).toBeUndefined();
    expect(seen[1].input.map((i: any) => i.type)).toEqual(["message", "reasoning", "message", "message"]);
    expect(ctx.response.body.previous_response_id).toBe("resp_prev");
    const rec = await store.get(live("acme"), "resp_new", Date.now());
    expect(rec).toMatchObject({ provider: "cc", native: false, previousResponseId: "resp_prev" });
    expect(rec!.input.map((i) => i.id)).toEqual(["msg_1", "rs_1", "msg_2", expect.stringMatching(/^msg_/)]);
  });

  it("translated previous: a native attempt gets the rebuilt conversation without reasoning it cannot verify; recorded native", async () => {
    const store = new MemoryResponseStore();
    await store.put(prevRecord(false));
    const { seen } = await run(store, { model: "m", previous_response_id: "resp_prev", input: "Again" }, [[nativeDriver, target("nat", true)]]);
    expect(seen[0].previous_response_id).toBeUndefined();
    expect(seen[0].input.map((i: any) => i.type)).toEqual(["message", "message", "message"]);
    expect((await store.get(live("acme"), "resp_new", Date.now()))!.native).toBe(true);
  });

  it("store: false saves nothing; expiry is the configured retention", async () => {
    const store = new MemoryResponseStore();
    await run(store, { model: "m", input: "x", store: false }, [[chatDriver, target("cc", false)]]);
    expect(await store.get(live("acme"), "resp_new", Date.now())).toBeUndefined();
    const before = Date.now();
    await run(store, { model: "m", input: "x" }, [[chatDriver, target("cc", false)]]);
    const rec = (await store.get(live("acme"), "resp_new", Date.now()))!;
    expect(rec.expiresAt - rec.createdAt).toBe(86_400_000);
    expect(rec.createdAt).toBeGreaterThanOrEqual(before);
  });

  it("a store failure: the answer still goes out, says store: false, and the failure is logged", async () => {
    const store = new MemoryResponseStore();
    store.put = async () => { throw new Error("disk full"); };
    const errors: unknown[] = [];
    const { ctx } = await run(store, { model: "m", input: "x" }, [[chatDriver, target("cc", false)]], errors);
    expect(ctx.response).toMatchObject({ status: 200, body: { id: "resp_new", status: "completed", store: false } });
    expect(JSON.stringify(errors)).toContain("disk full");
  });
});
