import { describe, expect, it } from "vitest";
import { relayResponsesBody } from "./responses-stream.ts";
import type { Usage } from "../../core/contracts/provider.ts";
import { clientWasTold } from "../../core/sse/told-error.ts";

const ev = (type: string, extra: Record<string, unknown>, seq: number) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq, ...extra })}\n\n`;
const usage = { input_tokens: 20, input_tokens_details: { cached_tokens: 8 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 5 }, total_tokens: 32 };
const resp = (status: string, u: unknown) => ({ response: { id: "resp_1", object: "response", status, output: [], usage: u } });
const created = ev("response.created", resp("in_progress", null), 0);
const delta = ev("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hi", logprobs: [] }, 1);
const added = ev("response.output_item.added", { output_index: 0, item: { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] } }, 1);

async function* reads(text: string, size: number, failAfter?: number) {
  const bytes = new TextEncoder().encode(text);
  for (let i = 0, n = 0; i < bytes.length; i += size, n++) {
    if (failAfter !== undefined && n === failAfter) throw Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });
    yield bytes.subarray(i, i + size);
  }
}

async function run(wire: string, size = 4096, failAfter?: number) {
  const r = await relayed(wire, size, failAfter);
  if (r.error) throw r.error;
  return r;
}

/** What the relay gave, and the error it ended with (if any). */
async function relayed(wire: string, size = 4096, failAfter?: number) {
  const usages: Usage[] = [];
  const order: string[] = [];
  const out: { event?: string; data: string }[] = [];
  const call = { reportUsage: (u: Usage) => { usages.push(u); order.push("usage"); }, reportFirstToken: () => order.push("first") };
  let error: any;
  try {
    for await (const e of relayResponsesBody(reads(wire, size, failAfter), call, "up", new AbortController().signal)) {
      out.push(e);
      order.push(e.event ?? "?");
    }
  } catch (e) {
    error = e;
  }
  return { out, usages, order, error };
}

describe("relayResponsesBody", () => {
  it("relays named events as they came (names kept, data untouched) in reads cut anywhere; usage from response.completed", async () => {
    const wire = created + added + delta + ev("response.completed", resp("completed", usage), 3);
    for (const size of [1, 13, 4096]) {
      const { out, usages, order } = await run(wire, size);
      expect(out.map((e) => e.event)).toEqual(["response.created", "response.output_item.added", "response.output_text.delta", "response.completed"]);
      expect(out.map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`).join("")).toBe(wire);
      expect(usages).toEqual([{ inputTokens: 12, cacheReadTokens: 8, outputTokens: 12, reasoningTokens: 5 }]);
      // First token on the first delta, not on response.created.
      expect(order.slice(0, 4)).toEqual(["response.created", "response.output_item.added", "first", "response.output_text.delta"]);
    }
  });

  it("usage from response.incomplete too; events after the terminal one are not relayed", async () => {
    const wire = created + delta + ev("response.incomplete", resp("incomplete", { ...usage, input_tokens_details: { cached_tokens: 0 } }), 2) + ev("response.created", resp("in_progress", null), 3);
    const { out, usages } = await run(wire);
    expect(out.at(-1)!.event).toBe("response.incomplete");
    expect(usages).toEqual([{ inputTokens: 20, outputTokens: 12, reasoningTokens: 5 }]);
  });

  it("a body that ends before a terminal event is an UPSTREAM_ERROR (after relaying what came, and response.failed)", async () => {
    const events: string[] = [];
    const it = relayResponsesBody(reads(created + delta, 4096), { reportUsage() {}, reportFirstToken() {} }, "up", new AbortController().signal);
    await expect((async () => { for await (const e of it) events.push(e.event!); })()).rejects.toMatchObject({ status: 502, code: "UPSTREAM_ERROR" });
    expect(events).toEqual(["response.created", "response.output_text.delta", "response.failed"]);
  });

  it("cut mid-response: response.failed with the output so far (the open item incomplete), numbered on; the error after it", async () => {
    const NEXT = Symbol.for("model-gateway.responses.next-sequence");
    const done = { id: "fc_1", type: "function_call", status: "completed", call_id: "call_1", name: "f", arguments: "{}" };
    const wire = created + ev("response.output_item.added", { output_index: 0, item: { ...done, status: "in_progress", arguments: "" } }, 1)
      + ev("response.output_item.done", { output_index: 0, item: done }, 2)
      + ev("response.output_item.added", { output_index: 1, item: { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] } }, 3)
      + ev("response.output_text.delta", { item_id: "msg_1", output_index: 1, content_index: 0, delta: "Hi" }, 4);
    for (const [size, failAfter] of [[4096, undefined], [wire.length, 1]] as const) {
      const out: { event?: string; data: string }[] = [];
      const it = relayResponsesBody(reads(wire + "event: response.output_text.delta\ndata: {", size, failAfter), { reportUsage() {}, reportFirstToken() {} }, "up", new AbortController().signal);
      const err = await (async () => { for await (const e of it) out.push(e); })().catch((e) => e);
      expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR" });
      expect(out.map((e) => e.event)).toEqual(["response.created", "response.output_item.added", "response.output_item.done", "response.output_item.added", "response.output_text.delta", "response.failed"]);
      const failed = JSON.parse(out.at(-1)!.data);
      expect(failed).toMatchObject({ type: "response.failed", sequence_number: 5, response: { id: "resp_1", object: "response", status: "failed", error: { code: "server_error", message: err.message }, usage: null } });
      expect(failed.response.output).toEqual([done, { id: "msg_1", type: "message", status: "incomplete", role: "assistant", content: [] }]);
      expect(err[NEXT]).toBe(6);
    }
  });

  it("after the upstream's own error event, or before anything was relayed, no response.failed is made up", async () => {
    const err = ev("error", { code: "server_error", message: "boom", param: null }, 2);
    expect((await relayed(created + delta + err)).out.map((e) => e.event)).toEqual(["response.created", "response.output_text.delta", "error"]);
    const events: string[] = [];
    const it = relayResponsesBody(reads(created, 4096), { reportUsage() {}, reportFirstToken() {} }, "up", new AbortController().signal);
    await expect((async () => { for await (const e of it) events.push(e.event!); })()).rejects.toMatchObject({ details: { reason: "empty_stream" } });
    expect(events).toEqual([]);
  });

  it("an upstream `error` event is relayed as is, and the end after it is not a second error", async () => {
    const err = ev("error", { code: "server_error", message: "boom", param: null }, 2);
    const { out, error } = await relayed(created + delta + err);
    expect(out.at(-1)).toEqual({ event: "error", data: JSON.stringify({ type: "error", sequence_number: 2, code: "server_error", message: "boom", param: null }) });
    // Still a failed request (the ledger's stream_error), of which the client was already told: the writer adds nothing.
    expect(error).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", message: "Provider up failed mid-stream: boom" });
    expect(clientWasTold(error)).toBe(true);
  });

  it("an `error` event whose data is not JSON (a proxy's `upstream reset`) is not relayed (an SDK's JSON.parse would throw on it): the stream ends as a cut one, in the upstream's words", async () => {
    const NEXT = Symbol.for("model-gateway.responses.next-sequence");
    const reset = "event: error\ndata: upstream reset\n\n";
    const { out, error } = await relayed(created + delta + reset);
    expect(out.map((e) => e.event)).toEqual(["response.created", "response.output_text.delta", "response.failed"]);
    expect(JSON.parse(out.at(-1)!.data)).toMatchObject({ sequence_number: 2, response: { status: "failed", error: { code: "server_error", message: "Provider up failed mid-stream: upstream reset" } } });
    expect(error).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, message: "Provider up failed mid-stream: upstream reset" });
    // The client was not told: the gateway's error event follows, numbered after response.failed.
    expect(clientWasTold(error)).toBe(false);
    expect(error[NEXT]).toBe(3);
  });

  it("an event whose data is not JSON (`data: {not json` mid-stream) is never relayed: response.failed and the error are numbered on from the upstream's last", async () => {
    const NEXT = Symbol.for("model-gateway.responses.next-sequence");
    const malformed = { status: 502, code: "UPSTREAM_ERROR", message: "Provider up sent a stream event that is not JSON", details: { provider: "up", reason: "invalid_event" } };
    const message = { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] };
    const head = created + ev("response.in_progress", resp("in_progress", null), 1) + ev("response.output_item.added", { output_index: 0, item: message }, 2)
      + ev("response.content_part.added", { item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }, 3)
      + ev("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hello" }, 4)
      + ev("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: " there" }, 5);
    const after = ev("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: " friend" }, 7);
    for (const bad of ["event: response.output_text.delta\ndata: {not json\n\n", "data: {not json\n\n", 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":6,"delta":"x"\n\n']) {
      const { out, error } = await relayed(head + bad + after, 7);
      expect([bad, out.map((e) => e.event)]).toEqual([bad, ["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.delta", "response.failed"]]);
      expect(out.slice(0, -1).map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`).join("")).toBe(head);
      expect(error).toMatchObject(malformed);
      const failed = JSON.parse(out.at(-1)!.data);
      expect(failed).toMatchObject({ type: "response.failed", sequence_number: 6, response: { id: "resp_1", status: "failed", error: { code: "server_error", message: malformed.message } } });
      // The message as it began (deltas are relayed, not kept: docs/responses.md).
      expect(failed.response.output).toEqual([{ ...message, status: "incomplete" }]);
      expect(clientWasTold(error)).toBe(false);
      expect(error[NEXT]).toBe(7);
    }
  });

  it("the same before any output fails before anything is relayed, in the upstream's words (retryable: another endpoint may serve)", async () => {
    const { out, error } = await relayed(created + "event: error\ndata: upstream reset\n\n");
    expect(out).toEqual([]);
    expect(error).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, message: "Provider up failed mid-stream: upstream reset" });
  });

  it("a transport failure mid-stream is a retryable gateway error", async () => {
    await expect(run(created + delta + delta, 20, 2)).rejects.toMatchObject({ code: "UPSTREAM_ERROR", retryable: true });
  });

  it("a stream cut off after events: the error carries the sequence_number after response.failed's, so the gateway's error event continues the numbering", async () => {
    const NEXT = Symbol.for("model-gateway.responses.next-sequence");
    const cut = await run(created + ev("response.output_text.delta", { delta: "Hi" }, 7), 4096).catch((e) => e);
    expect(cut[NEXT]).toBe(9);
    const wire = created + ev("response.output_text.delta", { delta: "x".repeat(60) }, 1) + ev("response.output_text.delta", { delta: "y".repeat(60) }, 2);
    const broken = await run(wire, 64, Math.floor(wire.length / 64)).catch((e) => e);
    expect(broken).toMatchObject({ code: "UPSTREAM_ERROR" });
    expect(broken[NEXT]).toBe(3);
  });
  it("a body that ends after response.created / .in_progress alone is a retryable empty stream, nothing relayed (so it can fall back)", async () => {
    const events: string[] = [];
    const wire = created + ev("response.in_progress", resp("in_progress", null), 1);
    const it = relayResponsesBody(reads(wire, 7), { reportUsage() {}, reportFirstToken() {} }, "up", new AbortController().signal);
    await expect((async () => { for await (const e of it) events.push(e.event!); })()).rejects.toMatchObject({ code: "UPSTREAM_ERROR", retryable: true, details: { reason: "empty_stream" } });
    expect(events).toEqual([]);
  });

  it("response.created then an error, or a response.failed with no output, is a retryable failure before anything is relayed", async () => {
    const failed = ev("response.failed", { response: { id: "resp_1", object: "response", status: "failed", error: { code: "server_error", message: "The model crashed" }, output: [], usage: null } }, 2);
    const error = ev("error", { code: "server_error", message: "Overloaded", param: null }, 2);
    for (const wire of [created + failed, created + ev("response.in_progress", resp("in_progress", null), 1) + error]) {
      const events: string[] = [];
      const it = relayResponsesBody(reads(wire, 7), { reportUsage() {}, reportFirstToken() {} }, "up", new AbortController().signal);
      await expect((async () => { for await (const e of it) events.push(e.event!); })()).rejects.toMatchObject({ code: "UPSTREAM_ERROR", retryable: true, message: expect.stringMatching(/crashed|Overloaded/) });
      expect(events).toEqual([]);
    }
  });

  it("an error or response.failed about the request (context_length_exceeded) before output is the client's 400, as the same HTTP 400 is", async () => {
    const message = "Your input exceeds the context window of this model.";
    const wires = [
      ev("error", { code: "context_length_exceeded", message, param: "input" }, 2), // as the SDK types it: flat
      ev("error", { error: { type: "invalid_request_error", code: "context_length_exceeded", message, param: "input" } }, 2), // nested
      ev("response.failed", { response: { id: "resp_1", object: "response", status: "failed", error: { code: "context_length_exceeded", message }, output: [], usage: null } }, 2),
    ];
    for (const tail of wires) {
      const r = await relayed(created + tail);
      expect(r.out).toEqual([]);
      expect(r.error).toMatchObject({ status: 400, code: "INVALID_REQUEST", retryable: false, headers: { "x-should-retry": "false" }, message: `Provider up rejected the request: ${message}` });
    }
  });

  it("an error or response.failed saying insufficient_quota (account out of credit) before output is not retryable and tells the client not to retry", async () => {
    const quota = { type: "insufficient_quota", code: "insufficient_quota", message: "You exceeded your current quota", param: null };
    const wires = [
      ev("error", { error: quota }, 2), // as captured: nested
      ev("error", { code: "insufficient_quota", message: "You exceeded your current quota", param: null }, 2), // as the SDK types it: flat
      ev("response.failed", { response: { id: "resp_1", object: "response", status: "failed", error: { code: "insufficient_quota", message: "You exceeded your current quota" }, output: [], usage: null } }, 2),
    ];
    for (const tail of wires) {
      const it = relayResponsesBody(reads(created + tail, 7), { reportUsage() {}, reportFirstToken() {} }, "up", new AbortController().signal);
      await expect((async () => { for await (const _ of it); })()).rejects.toMatchObject({
        code: "UPSTREAM_ERROR", retryable: false, headers: { "x-should-retry": "false" }, details: { reason: "out_of_credit" }, message: expect.stringContaining("exceeded your current quota"),
      });
    }
  });

  it("a response.failed after output is relayed as it came, and ends the relay with the upstream's failure, the client already told", async () => {
    const failed = ev("response.failed", { response: { id: "resp_1", object: "response", status: "failed", error: { code: "server_error", message: "cut" }, output: [{ id: "msg_1", type: "message" }], usage: null } }, 3);
    const error = ev("error", { code: "server_error", message: "boom", param: null }, 2);
    for (const wire of [created + delta + failed, created + delta + error + failed]) {
      const r = await relayed(wire);
      expect(r.out.map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`).join("")).toBe(wire);
      expect(r.error).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, message: expect.stringMatching(/failed mid-stream: (cut|boom)/) });
      expect(clientWasTold(r.error)).toBe(true);
    }
  });
});

describe("relayResponsesBody: the answer relayed is bounded (server.upstream_limits.answer_bytes)", () => {
  /** `n` deltas of "abcd" after the item's start, then the item done and the stream completed. */
  const wire = (n: number) => {
    let s = created + added, seq = 2;
    for (let i = 0; i < n; i++) s += ev("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: "abcd", logprobs: [] }, seq++);
    const item = { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "abcd".repeat(n), annotations: [] }] };
    return s + ev("response.output_item.done", { output_index: 0, item }, seq++) + ev("response.completed", resp("completed", usage), seq);
  };

  async function relay(text: string, answerBytes: number) {
    const out: { event?: string; data: string }[] = [];
    let failure: any;
    try {
      for await (const e of relayResponsesBody(reads(text, 64), { reportUsage() {}, reportFirstToken() {} }, "up", new AbortController().signal, answerBytes)) out.push(e);
    } catch (e) {
      failure = e;
    }
    return { out, failure };
  }

  /** The data of the open item's output_item.added, which counts until the item is done. */
  const addedData = added.slice(added.indexOf("data: ") + 6).trimEnd();

  it("deltas past the bound: the one that goes past is not relayed, response.failed then answer_too_large naming the setting", async () => {
    const limit = addedData.length + 4 * 6;
    const { out, failure } = await relay(wire(10), limit);
    expect(out.filter((e) => e.event === "response.output_text.delta")).toHaveLength(6);
    expect(out.at(-1)!.event).toBe("response.failed");
    expect(failure).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", details: { provider: "up", reason: "answer_too_large", limit_bytes: limit, setting: "server.upstream_limits.answer_bytes" } });
    expect(failure.message).toContain("server.upstream_limits.answer_bytes");
    // A code Codex CLI stops on (it sends a server_error's request again, five times, each cut the same way), the
    // message still saying what happened and naming the gateway's code.
    expect(JSON.parse(out.at(-1)!.data).response.error).toEqual({ code: "invalid_prompt", message: expect.stringContaining(failure.message) });
    expect(JSON.parse(out.at(-1)!.data).response.error.message).toContain("UPSTREAM_ERROR answer_too_large");
  });

  it("within the bound, relayed whole: a finished item counts once (its deltas are in its output_item.done)", async () => {
    const text = wire(10);
    const itemDone = text.slice(text.indexOf("event: response.output_item.done"), text.indexOf("event: response.completed"));
    const doneData = itemDone.slice(itemDone.indexOf("data: ") + 6).trimEnd();
    const { out, failure } = await relay(text, doneData.length);
    expect(failure).toBeUndefined();
    expect(out.at(-1)!.event).toBe("response.completed");
  });

  it("items only ever added (large, never done) count too: the stream is cut at the bound, not relayed and kept without end", async () => {
    const big = "x".repeat(10_000);
    let text = created;
    for (let i = 0; i < 50; i++) text += ev("response.output_item.added", { output_index: i, item: { id: `msg_${i}`, type: "message", status: "in_progress", role: "assistant", content: [{ type: "output_text", text: big, annotations: [] }] } }, i + 1);
    const { out, failure } = await relay(text, 100_000);
    expect(failure).toMatchObject({ details: { reason: "answer_too_large", limit_bytes: 100_000 } });
    expect(out.filter((e) => e.event === "response.output_item.added")).toHaveLength(9);
    expect(out.at(-1)!.event).toBe("response.failed");
    expect(JSON.parse(out.at(-1)!.data).response.output).toHaveLength(9);
  });

  it("an added item counts once: its output_item.done takes its place", async () => {
    const text = wire(10);
    const itemDone = text.slice(text.indexOf("event: response.output_item.done"), text.indexOf("event: response.completed"));
    const doneData = itemDone.slice(itemDone.indexOf("data: ") + 6).trimEnd();
    // Two items, one after the other: the bound is the two done events, not the added ones as well.
    const second = text.slice(text.indexOf("event: response.output_item.added"), text.indexOf("event: response.completed"));
    const twice = text.slice(0, text.indexOf("event: response.completed")) + second + text.slice(text.indexOf("event: response.completed"));
    const { out, failure } = await relay(twice, 2 * doneData.length);
    expect(failure).toBeUndefined();
    expect(out.at(-1)!.event).toBe("response.completed");
  });

  it("output_text.done events of 100 KB without end (text in no delta) are cut at answer_too_large, not relayed without end", async () => {
    const big = "y".repeat(100_000);
    async function* endless() {
      const enc = new TextEncoder();
      yield enc.encode(created + added);
      // 200 events (20 MB) before the upstream gives up: a relay that counted none of them relays them all.
      for (let i = 0; i < 200; i++) yield enc.encode(ev("response.output_text.done", { item_id: "msg_1", output_index: 0, content_index: 0, text: big, logprobs: [] }, i + 2));
    }
    const out: { event?: string; data: string }[] = [];
    let failure: any;
    try {
      for await (const e of relayResponsesBody(endless(), { reportUsage() {}, reportFirstToken() {} }, "up", new AbortController().signal, 200_000)) out.push(e);
    } catch (e) {
      failure = e;
    }
    expect(failure).toMatchObject({ details: { reason: "answer_too_large", limit_bytes: 200_000 } });
    expect(out.filter((e) => e.event === "response.output_text.done").length).toBeLessThanOrEqual(4);
    expect(out.at(-1)!.event).toBe("response.failed");
  });

  it("an answer at the bound with its content_part.added, output_text.done and content_part.done (which repeat its text) is relayed whole", async () => {
    const text = "abcd".repeat(2000);
    let s = created + added + ev("response.content_part.added", { item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } }, 2), seq = 3;
    for (let i = 0; i < 2000; i++) s += ev("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: "abcd", logprobs: [] }, seq++);
    s += ev("response.output_text.done", { item_id: "msg_1", output_index: 0, content_index: 0, text, logprobs: [] }, seq++);
    s += ev("response.content_part.done", { item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", text, annotations: [], logprobs: [] } }, seq++);
    const item = { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [], logprobs: [] }] };
    const itemDone = ev("response.output_item.done", { output_index: 0, item }, seq++);
    s += itemDone + ev("response.completed", resp("completed", usage), seq);
    const doneData = itemDone.slice(itemDone.indexOf("data: ") + 6).trimEnd();
    const { out, failure } = await relay(s, doneData.length);
    expect(failure).toBeUndefined();
    expect(out.at(-1)!.event).toBe("response.completed");
  });

  it("a reasoning summary in 250 short parts (20 characters each) and a message, well within the bound, is relayed whole: each part's added/done events count by their text, not their envelopes", async () => {
    // As OpenAI streams it: per part a summary_part.added (empty), its deltas, summary_text.done and summary_part.done.
    const rs = "rs_68c1" + "b".repeat(40), msg = "msg_68c1" + "d".repeat(40);
    let seq = 1;
    let s = created + ev("response.output_item.added", { output_index: 0, item: { id: rs, type: "reasoning", summary: [] } }, seq++);
    const summary: { type: string; text: string }[] = [];
    for (let p = 0; p < 250; p++) {
      const text = `**Step ${p}** `.padEnd(20, "r");
      s += ev("response.reasoning_summary_part.added", { item_id: rs, output_index: 0, summary_index: p, part: { type: "summary_text", text: "" } }, seq++);
      s += ev("response.reasoning_summary_text.delta", { item_id: rs, output_index: 0, summary_index: p, delta: text, obfuscation: "abc" }, seq++);
      s += ev("response.reasoning_summary_text.done", { item_id: rs, output_index: 0, summary_index: p, text }, seq++);
      s += ev("response.reasoning_summary_part.done", { item_id: rs, output_index: 0, summary_index: p, part: { type: "summary_text", text } }, seq++);
      summary.push({ type: "summary_text", text });
    }
    const reasoning = { id: rs, type: "reasoning", summary };
    s += ev("response.output_item.done", { output_index: 0, item: reasoning }, seq++);
    const text = "Answer ".padEnd(200, "t");
    s += ev("response.output_item.added", { output_index: 1, item: { id: msg, type: "message", status: "in_progress", content: [], role: "assistant" } }, seq++);
    s += ev("response.content_part.added", { item_id: msg, output_index: 1, content_index: 0, part: { type: "output_text", annotations: [], logprobs: [], text: "" } }, seq++);
    for (let i = 0; i < text.length; i += 20) s += ev("response.output_text.delta", { item_id: msg, output_index: 1, content_index: 0, delta: text.slice(i, i + 20), logprobs: [], obfuscation: "abc" }, seq++);
    s += ev("response.output_text.done", { item_id: msg, output_index: 1, content_index: 0, text, logprobs: [] }, seq++);
    const part = { type: "output_text", annotations: [], logprobs: [], text };
    s += ev("response.content_part.done", { item_id: msg, output_index: 1, content_index: 0, part }, seq++);
    const message = { id: msg, type: "message", status: "completed", content: [part], role: "assistant" };
    s += ev("response.output_item.done", { output_index: 1, item: message }, seq++);
    s += ev("response.completed", resp("completed", usage), seq);
    // The final output is about 70 % of the bound.
    const finalSize = JSON.stringify([reasoning, message]).length;
    expect(finalSize).toBeLessThan(0.75 * 20_000);
    expect(finalSize).toBeGreaterThan(0.65 * 20_000);
    const { out, failure } = await relay(s, 20_000);
    expect(failure).toBeUndefined();
    expect(out.at(-1)!.event).toBe("response.completed");
  });
});
