import { describe, expect, it } from "vitest";
import type { SseEvent } from "../sse/parse.ts";
import { persistJson, persistStream } from "./persist.ts";

const ev = (type: string, payload: Record<string, unknown>): SseEvent => ({ event: type, data: JSON.stringify({ type, ...payload }) });
const resp = (status: string) => ({ id: "resp_1", object: "response", status, previous_response_id: null, output: [{ type: "message", id: "msg_1" }] });

async function* gen(events: SseEvent[], log: string[]) {
  for (const e of events) {
    log.push(`yield ${e.event}`);
    yield e;
  }
}

async function collect(it: AsyncIterable<SseEvent>) {
  const out: SseEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

describe("persistStream", () => {
  it("saves the final response once, before the final event is passed on; other events pass untouched", async () => {
    const log: string[] = [];
    const delta = ev("response.output_text.delta", { delta: "Hi" });
    const events = [ev("response.created", { response: resp("in_progress") }), delta, ev("response.completed", { response: resp("completed") })];
    const saved: unknown[] = [];
    const out: SseEvent[] = [];
    for await (const e of persistStream(gen(events, log), { previousResponseId: null, save: async (r) => { log.push("save"); saved.push(r); return true; } })) {
      log.push(`out ${e.event}`);
      out.push(e);
    }
    expect(saved).toEqual([resp("completed")]);
    expect(log.indexOf("save")).toBeLessThan(log.indexOf("out response.completed"));
    expect(out[1]).toBe(delta);
    expect(out[0]).toBe(events[0]); // nothing to stamp, nothing to save: the same event object
  });

  it("stamps previous_response_id on every event carrying the response, and saves incomplete responses", async () => {
    const saved: any[] = [];
    const out = await collect(persistStream(gen([ev("response.created", { response: resp("in_progress") }), ev("response.incomplete", { response: resp("incomplete") })], []),
      { previousResponseId: "resp_0", save: async (r) => { saved.push(r); return true; } }));
    expect(out.map((e) => JSON.parse(e.data).response.previous_response_id)).toEqual(["resp_0", "resp_0"]);
    expect(saved.map((r) => r.status)).toEqual(["incomplete"]);
  });

  it("store: false saves nothing; a failed response is not saved; events without `event:` are recognised by type", async () => {
    let saves = 0;
    await collect(persistStream(gen([ev("response.completed", { response: resp("completed") })], []), { previousResponseId: null, save: null }));
    await collect(persistStream(gen([ev("response.failed", { response: resp("failed") })], []), { previousResponseId: null, save: async () => { saves++; return true; } }));
    expect(saves).toBe(0);
    await collect(persistStream(gen([{ data: JSON.stringify({ type: "response.completed", response: resp("completed") }) }], []), { previousResponseId: null, save: async () => { saves++; return true; } }));
    expect(saves).toBe(1);
  });
});

describe("persistJson", () => {
  it("stamps, gives id-less output items an id, saves completed responses only", async () => {
    const saved: any[] = [];
    const body: any = { ...resp("completed"), output: [{ type: "function_call", call_id: "c" }] };
    await persistJson(body, { previousResponseId: "resp_0", save: async (r) => { saved.push(r); return true; } });
    expect(body.previous_response_id).toBe("resp_0");
    expect(body.output[0].id).toMatch(/^fc_/);
    expect(saved).toEqual([body]);
    await persistJson({ ...resp("failed") }, { previousResponseId: null, save: async (r) => { saved.push(r); return true; } });
    expect(saved).toHaveLength(1);
  });
});

describe("the full response behind what the client was shown", () => {
  const FULL = Symbol.for("model-gateway.responses.full");
  const fullOutput = [{ type: "reasoning", id: "rs_1", summary: [], encrypted_content: "mgr1.x" }];

  it("JSON: the hidden output is handed to save", async () => {
    const body: any = { ...resp("completed"), output: [{ type: "reasoning", id: "rs_1", summary: [] }] };
    Object.defineProperty(body, FULL, { value: { ...body, output: fullOutput }, enumerable: false });
    const saved: unknown[] = [];
    await persistJson(body, { previousResponseId: null, save: async (r, full) => { saved.push([r, full]); return true; } });
    expect(saved).toEqual([[body, fullOutput]]);
  });

  it("stream: read from the terminal event object", async () => {
    const e = ev("response.completed", { response: { ...resp("completed"), output: [{ type: "reasoning", id: "rs_1", summary: [] }] } });
    Object.defineProperty(e, FULL, { value: { output: fullOutput }, enumerable: false });
    const saved: unknown[] = [];
    await collect(persistStream(gen([e], []), { previousResponseId: null, save: async (_r, full) => { saved.push(full); return true; } }));
    expect(saved).toEqual([fullOutput]);
  });

  it("a response that could not be kept says store: false, streamed or not (its id will not be found)", async () => {
    const out = await collect(persistStream(gen([ev("response.completed", { response: { ...resp("completed"), store: true } })], []), { previousResponseId: null, save: async () => false }));
    expect(JSON.parse(out[0]!.data).response.store).toBe(false);
    const body = { ...resp("completed"), store: true };
    await persistJson(body, { previousResponseId: null, save: async () => false });
    expect(body.store).toBe(false);
    const kept = { ...resp("completed"), store: true };
    await persistJson(kept, { previousResponseId: null, save: async () => true });
    expect(kept.store).toBe(true);
  });
});
