import { describe, expect, it } from "vitest";
import type { SseEvent } from "../../../core/sse/parse.ts";
import { GatewayError } from "../../../core/errors.ts";
import { chatToResponsesStream } from "./stream.ts";
import { chatToResponse, echoOf } from "./response.ts";
import { decodeReasoning, fullResponseOf } from "./reasoning.ts";

async function run(chunks: unknown[], done = true, show = false, raw: SseEvent[] = []) {
  async function* src(): AsyncIterable<SseEvent> {
    for (const c of chunks) yield { data: JSON.stringify(c) };
    if (done) yield { data: "[DONE]" };
  }
  const out: any[] = [];
  for await (const e of chatToResponsesStream(src(), echoOf({ model: "m", input: "x" }), { flavor: "messages", provider: "up", show })) {
    const d = JSON.parse(e.data);
    expect(e.event).toBe(d.type);
    out.push(d);
    raw.push(e);
  }
  return out;
}

const c = (delta: unknown, finish: string | null = null, extra = {}) => ({ id: "c1", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }], ...extra });

describe("chat chunks -> Responses events", () => {
  it("text then two tool calls: items in order, each closed before the next opens, numbered from 0", async () => {
    const out = await run([
      c({ role: "assistant", content: "Hi" }), c({ content: " there" }),
      c({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "f", arguments: "" } }] }),
      c({ tool_calls: [{ index: 0, function: { arguments: "{\"a\":" } }] }), c({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }),
      c({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "g", arguments: "{}" } }] }, "tool_calls"),
      { id: "c1", choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 2 } } },
    ]);
    expect(out.map((e) => e.sequence_number)).toEqual(out.map((_, i) => i));
    expect(out.map((e) => e.type)).toEqual([
      "response.created", "response.in_progress",
      "response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
      "response.output_text.done", "response.content_part.done", "response.output_item.done",
      "response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.delta",
      "response.function_call_arguments.done", "response.output_item.done",
      "response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
      "response.completed",
    ]);
    const final = out.at(-1).response;
    expect(final.status).toBe("completed");
    expect(final.output.map((o: any) => o.type)).toEqual(["message", "function_call", "function_call"]);
    expect(final.output[0].content[0].text).toBe("Hi there");
    expect(final.output[1]).toMatchObject({ call_id: "call_a", name: "f", arguments: "{\"a\":1}", status: "completed" });
    expect(final.output.map((o: any, i: number) => out.find((e) => e.type === "response.output_item.done" && e.output_index === i).item.id)).toEqual(final.output.map((o: any) => o.id));
    expect(final.usage).toEqual({ input_tokens: 10, input_tokens_details: { cached_tokens: 4, cache_write_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 2 }, total_tokens: 15 });
  });

  it("finish_reason length is response.incomplete with max_output_tokens", async () => {
    const out = await run([c({ content: "cut" }, "length")]);
    expect(out.at(-1)).toMatchObject({ type: "response.incomplete", response: { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } } });
  });

  it("an empty completion still opens and completes the response", async () => {
    const out = await run([]);
    expect(out.map((e) => e.type)).toEqual(["response.created", "response.in_progress", "response.completed"]);
  });

  it("an upstream error chunk, or EOF before any finish reason, is response.failed then a GatewayError (rendered as the error event)", async () => {
    for (const [chunks, done, why] of [[[c({ content: "a" }), { error: { message: "boom" } }], true, /boom/], [[c({ content: "a" })], false, /ended the stream early/]] as const) {
      const seen: SseEvent[] = [];
      const err = await run([...chunks], done, false, seen).catch((e) => e);
      expect(err).toBeInstanceOf(GatewayError);
      // The error event the gateway writes next continues the numbering.
      expect(err[Symbol.for("model-gateway.responses.next-sequence")]).toBe(seen.length);
      const last = JSON.parse(seen.at(-1)!.data);
      expect(last).toMatchObject({ type: "response.failed", response: { status: "failed", error: { code: "server_error", message: expect.stringMatching(why) } } });
      // What was output before the failure is in the failed response, as far as it got.
      expect(last.response.output).toEqual([expect.objectContaining({ type: "message", status: "incomplete", content: [expect.objectContaining({ text: "a" })] })]);
      expect(last.sequence_number).toBe(seen.length - 1);
    }
  });

  it("a failure before the first chunk emits nothing (the client gets an HTTP error, a fallback may still serve)", async () => {
    const seen: SseEvent[] = [];
    const err = await run([{ error: { message: "boom" } }], true, false, seen).catch((e) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err[Symbol.for("model-gateway.responses.next-sequence")]).toBeUndefined();
    expect(seen).toEqual([]);
  });
});

describe("reasoning text", () => {
  it("becomes a reasoning item with summary events, closed before the message opens", async () => {
    const out = await run([c({ reasoning_content: "think" }), c({ reasoning_content: "ing" }), c({ content: "ok" }, "stop")]);
    expect(out.map((e) => e.type).slice(2, 9)).toEqual([
      "response.output_item.added", "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done",
    ]);
    const final = out.at(-1).response;
    expect(final.output.map((o: any) => o.type)).toEqual(["reasoning", "message"]);
    expect(final.output[0].summary).toEqual([{ type: "summary_text", text: "thinking" }]);
  });
});

describe("signed reasoning (reasoning_details) -> encrypted_content", () => {
  const thinking = { type: "reasoning.text", text: "think", signature: "sig", format: "anthropic-claude-v1", index: 1 };
  const redacted = { type: "reasoning.encrypted", data: "opaque", format: "anthropic-claude-v1", index: 0 };
  const chunks = [
    c({ reasoning_details: [redacted], thinking_blocks: [{ type: "redacted_thinking", data: "opaque" }] }),
    c({ reasoning_content: "thi" }), c({ reasoning_content: "nk" }),
    c({ reasoning_details: [thinking] }),
    c({ tool_calls: [{ index: 0, id: "toolu_1", type: "function", function: { name: "f", arguments: "{}" } }] }, "tool_calls"),
  ];

  it("with include: in output_item.done and the terminal response; a redacted block opens the item without a summary part", async () => {
    const out = await run(chunks, true, true);
    expect(out.map((e) => e.type).slice(2, 9)).toEqual([
      "response.output_item.added", "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done",
    ]);
    const done = out.find((e) => e.type === "response.output_item.done").item;
    expect(done.summary).toEqual([{ type: "summary_text", text: "think" }]);
    expect(decodeReasoning(done.encrypted_content)).toEqual({ p: "messages", d: [redacted, thinking] });
    const final = out.at(-1).response;
    expect(final.output[0]).toEqual(done);
    expect(final.output[1]).toMatchObject({ type: "function_call", call_id: "toolu_1" });
  });

  it("without include: hidden from the client, kept on the terminal event for the gateway's store", async () => {
    const raw: SseEvent[] = [];
    const out = await run(chunks, true, false, raw);
    expect(out.find((e) => e.type === "response.output_item.done").item).not.toHaveProperty("encrypted_content");
    expect(out.at(-1).response.output[0]).not.toHaveProperty("encrypted_content");
    expect(raw.at(-1)!.data).not.toContain("encrypted_content");
    const full = fullResponseOf(raw.at(-1)) as any;
    expect(full.id).toBe(out.at(-1).response.id);
    expect(decodeReasoning(full.output[0].encrypted_content)?.d).toEqual([redacted, thinking]);
    expect(fullResponseOf(raw[0])).toBeUndefined();
  });
});

describe("refusals", () => {
  it("delta.refusal is a refusal content part after the text part, with refusal events", async () => {
    const out = await run([c({ content: "I" }), c({ refusal: "Can't" }), c({ refusal: " help." }, "stop")]);
    expect(out.map((e) => e.type).slice(2, -1)).toEqual([
      "response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.content_part.done",
      "response.content_part.added", "response.refusal.delta", "response.refusal.delta", "response.refusal.done", "response.content_part.done", "response.output_item.done",
    ]);
    expect(out.filter((e) => e.type.startsWith("response.refusal")).map((e) => e.content_index)).toEqual([1, 1, 1]);
    expect(out.find((e) => e.type === "response.refusal.done").refusal).toBe("Can't help.");
    expect(out.at(-1).response.output[0].content).toEqual([
      { type: "output_text", text: "I", annotations: [], logprobs: [] }, { type: "refusal", refusal: "Can't help." },
    ]);
  });
});

describe("logprobs", () => {
  it("chat chunk logprobs ride on output_text.delta and are gathered in .done and the part", async () => {
    const lp = (token: string) => ({ token, logprob: -0.1, bytes: [...Buffer.from(token)], top_logprobs: [] });
    const chunk = (content: string) => ({ id: "c1", created: 1, model: "m", choices: [{ index: 0, delta: { content }, logprobs: { content: [lp(content)] }, finish_reason: null }] });
    const out = await run([chunk("Hi"), chunk("!"), c({}, "stop")]);
    expect(out.filter((e) => e.type === "response.output_text.delta").map((e) => e.logprobs)).toEqual([[lp("Hi")], [lp("!")]]);
    expect(out.find((e) => e.type === "response.output_text.done").logprobs).toEqual([lp("Hi"), lp("!")]);
    expect(out.at(-1).response.output[0].content[0].logprobs).toEqual([lp("Hi"), lp("!")]);
  });
});

describe("parallel tool calls whose fragments interleave (reference §1.5: keyed by index)", () => {
  // The frames of the audit's fake OpenAI upstream: two calls opened (id and name once each), then call 0's arguments
  // in 3-character fragments with call 1's "{}" after the third.
  const ARGS = '{"city": "São Paulo", "note": "", "q": "a\\"b\\\\c\\n", "nested": {"a": [1, 2.5, null, true]}, "emoji": "👋🏽", "cjk": "世界"}';
  const pieces = ARGS.match(/[\s\S]{1,3}/gu)!;
  const chunks = [
    c({ role: "assistant", content: "", refusal: null }), c({ content: "Sur" }), c({ content: "e" }),
    c({ tool_calls: [{ index: 0, id: "call_A1", type: "function", function: { name: "get_weather", arguments: "" } }] }),
    c({ tool_calls: [{ index: 1, id: "call_B2", type: "function", function: { name: "get_time", arguments: "" } }] }),
    ...pieces.flatMap((p, k) => [c({ tool_calls: [{ index: 0, function: { arguments: p } }] }), ...(k === 2 ? [c({ tool_calls: [{ index: 1, function: { arguments: "{}" } }] })] : [])]),
    c({}, "tool_calls"),
    { id: "c1", choices: [], usage: { prompt_tokens: 50, completion_tokens: 30, total_tokens: 80 } },
  ];

  it("each fragment goes to its own call's item; both close at the end in output_index order", async () => {
    const out = await run(chunks);
    expect(out.map((e) => e.sequence_number)).toEqual(out.map((_, i) => i));
    const final = out.at(-1).response;
    expect(final.output.map((o: any) => [o.type, o.call_id, o.name, o.arguments])).toEqual([
      ["message", undefined, undefined, undefined],
      ["function_call", "call_A1", "get_weather", ARGS],
      ["function_call", "call_B2", "get_time", "{}"],
    ]);
    const added = out.filter((e) => e.type === "response.output_item.added");
    expect(added.map((e) => e.output_index)).toEqual([0, 1, 2]);
    const [a, b] = added.slice(1).map((e) => e.item.id);
    const deltas = out.filter((e) => e.type === "response.function_call_arguments.delta");
    expect(deltas.filter((e) => e.item_id === a).map((e) => e.output_index)).toEqual(pieces.map(() => 1));
    expect(deltas.filter((e) => e.item_id === a).map((e) => e.delta).join("")).toBe(ARGS);
    expect(deltas.filter((e) => e.item_id === b)).toEqual([expect.objectContaining({ output_index: 2, delta: "{}" })]);
    // Nothing after an item's done targets it; the calls close in order, after their last fragment.
    expect(out.map((e) => e.type).slice(-6)).toEqual([
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done", "response.output_item.done", "response.function_call_arguments.done", "response.output_item.done",
      "response.completed",
    ]);
    expect(out.filter((e) => e.type === "response.output_item.done").map((e) => [e.output_index, e.item.id])).toEqual([[0, final.output[0].id], [1, a], [2, b]]);
    expect(out.find((e) => e.type === "response.function_call_arguments.done" && e.item_id === a)).toMatchObject({ output_index: 1, name: "get_weather", arguments: ARGS });
  });

  it("a call whose arguments are whole closes when the next call starts, so sequential calls stream as before", async () => {
    const out = await run([
      c({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "f", arguments: "{\"a\":" } }] }),
      c({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "g", arguments: "" } }] }),
      c({ tool_calls: [{ index: 0, function: { arguments: "{\"b\":1}}" } }] }),
      c({ tool_calls: [{ index: 2, id: "call_c", type: "function", function: { name: "h", arguments: "[]" } }] }),
      c({ tool_calls: [{ index: 1, function: { arguments: "{}" } }] }, "tool_calls"),
    ]);
    // Call 0 was still open when call 1 started (its arguments were not whole); when call 2 started, call 0 was whole
    // and closed, but call 1 (no arguments yet) stayed open with call 2.
    expect(out.map((e) => `${e.type.replace("response.", "")}${e.output_index ?? ""}`).slice(2)).toEqual([
      "output_item.added0", "function_call_arguments.delta0", "output_item.added1", "function_call_arguments.delta0",
      "function_call_arguments.done0", "output_item.done0", "output_item.added2", "function_call_arguments.delta2",
      "function_call_arguments.delta1", "function_call_arguments.done1", "output_item.done1", "function_call_arguments.done2", "output_item.done2",
      "completed",
    ]);
    expect(out.at(-1).response.output.map((o: any) => [o.call_id, o.arguments])).toEqual([["call_a", "{\"a\":{\"b\":1}}"], ["call_b", "{}"], ["call_c", "[]"]]);
  });

  it("text or reasoning between one call's argument fragments (DeepSeek's reasoning_content) leaves the call open: every fragment reaches its item", async () => {
    const out = await run([
      c({ tool_calls: [{ index: 0, id: "call_w", type: "function", function: { name: "get_weather", arguments: "{\"city\":" } }] }),
      c({ reasoning_content: "Paris it is." }),
      c({ content: "Checking" }),
      c({ tool_calls: [{ index: 0, function: { arguments: "\"Paris\"}" } }] }),
      c({ content: " now." }),
      c({}, "tool_calls"),
    ]);
    expect(out.map((e) => e.sequence_number)).toEqual(out.map((_, i) => i));
    const final = out.at(-1).response;
    expect(final.status).toBe("completed");
    expect(final.output.map((o: any) => [o.type, o.arguments ?? o.content?.[0]?.text])).toEqual([
      ["function_call", "{\"city\":\"Paris\"}"], ["reasoning", undefined], ["message", "Checking now."],
    ]);
    // Each item's output_index is its place in the order items were added, and in the final output.
    const added = out.filter((e) => e.type === "response.output_item.added");
    expect(added.map((e) => [e.output_index, e.item.type])).toEqual([[0, "function_call"], [1, "reasoning"], [2, "message"]]);
    const deltas = out.filter((e) => e.type === "response.function_call_arguments.delta");
    expect(deltas.map((e) => [e.output_index, e.item_id, e.delta])).toEqual([[0, added[0].item.id, "{\"city\":"], [0, added[0].item.id, "\"Paris\"}"]]);
    // Nothing targets an item after its done; the items close in output_index order at the end.
    const doneAt = new Map(out.flatMap((e, i) => (e.type === "response.output_item.done" ? [[e.output_index, i]] : [])));
    out.forEach((e, i) => { if (e.output_index !== undefined && e.type !== "response.output_item.done") expect(i).toBeLessThan(doneAt.get(e.output_index)!); });
    expect(out.filter((e) => e.type === "response.output_item.done").map((e) => e.output_index)).toEqual([1, 0, 2]);
  });

  it("a call whose arguments are whole closes when text starts, as before", async () => {
    const out = await run([
      c({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "f", arguments: "{}" } }] }),
      c({ content: "done" }),
      c({}, "tool_calls"),
    ]);
    expect(out.map((e) => `${e.type.replace("response.", "")}${e.output_index ?? ""}`).slice(2, 7)).toEqual([
      "output_item.added0", "function_call_arguments.delta0", "function_call_arguments.done0", "output_item.done0", "output_item.added1",
    ]);
  });

  it("a call cut off by finish_reason length is incomplete (clients run completed calls); a whole one before it stays completed", async () => {
    const out = await run([
      c({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "f", arguments: "{}" } }] }),
      c({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "g", arguments: "{\"city\":" } }] }),
      c({ content: "text after" }),
      c({}, "length"),
    ]);
    const last = out.at(-1);
    expect(last.type).toBe("response.incomplete");
    expect(last.response.output.map((o: any) => [o.type, o.status])).toEqual([["function_call", "completed"], ["function_call", "incomplete"], ["message", "incomplete"]]);
    const done = out.filter((e) => e.type === "response.output_item.done" && e.item.type === "function_call").map((e) => [e.item.call_id, e.item.status]);
    expect(done).toEqual([["call_a", "completed"], ["call_b", "incomplete"]]);
  });

  it("a chat host's streamed reasoning text: the blob names the field it came in, which the next turn sends it back in", async () => {
    async function* src(): AsyncIterable<SseEvent> {
      for (const ch of [c({ reasoning_content: "hm" }), c({ reasoning_content: "m" }), c({ content: "ok" }, "stop")]) yield { data: JSON.stringify(ch) };
      yield { data: "[DONE]" };
    }
    const out: any[] = [];
    for await (const e of chatToResponsesStream(src(), echoOf({ model: "m", input: "x" }), { flavor: "chat", provider: "ds", show: true })) out.push(JSON.parse(e.data));
    const rs = out.at(-1).response.output[0];
    expect(rs.summary).toEqual([{ type: "summary_text", text: "hmm" }]);
    expect(decodeReasoning(rs.encrypted_content)).toEqual({ p: "chat", n: "ds", d: [], t: "reasoning_content" });
  });

  it("a message open when the answer is cut by length or content_filter is incomplete; one a call closed before stays completed", async () => {
    for (const finish of ["length", "content_filter"]) {
      const out = await run([
        c({ content: "Checking." }),
        c({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "f", arguments: "{}" } }] }),
        c({ content: "The capital is" }),
        c({}, finish),
      ]);
      const done = out.filter((e) => e.type === "response.output_item.done").map((e) => [e.item.type, e.item.status]);
      expect(done).toEqual([["message", "completed"], ["function_call", "completed"], ["message", "incomplete"]]);
      expect(out.at(-1).response.output.map((o: any) => o.status)).toEqual(["completed", "completed", "incomplete"]);
    }
  });

  it("a failure with a message open after an unfinished call lists both, in output_index order", async () => {
    const seen: SseEvent[] = [];
    await run([
      c({ tool_calls: [{ index: 0, id: "call_w", type: "function", function: { name: "f", arguments: "{\"a\":" } }] }),
      c({ content: "Checking" }),
    ], false, false, seen).catch(() => undefined);
    const failed = JSON.parse(seen.at(-1)!.data).response;
    expect(failed.output.map((o: any) => [o.type, o.status])).toEqual([["function_call", "incomplete"], ["message", "incomplete"]]);
  });

  it("a failure mid-stream lists every open call as incomplete", async () => {
    const seen: SseEvent[] = [];
    await run(chunks.slice(0, 8), false, false, seen).catch(() => undefined);
    const failed = JSON.parse(seen.at(-1)!.data).response;
    expect(failed.output.map((o: any) => [o.type, o.status, o.call_id])).toEqual([["message", "completed", undefined], ["function_call", "incomplete", "call_A1"], ["function_call", "incomplete", "call_B2"]]);
  });
});

describe("the answer a stream builds up is bounded (server.upstream_limits.answer_bytes)", () => {
  /** Events until the stream ends or fails, and its failure. */
  async function bounded(chunks: unknown[], answerBytes: number) {
    async function* src(): AsyncIterable<SseEvent> {
      for (const ch of chunks) yield { data: JSON.stringify(ch) };
      yield { data: "[DONE]" };
    }
    const out: any[] = [];
    let failure: any;
    try {
      for await (const e of chatToResponsesStream(src(), echoOf({ model: "m", input: "x" }), { flavor: "chat", provider: "up", show: false, answerBytes })) out.push(JSON.parse(e.data));
    } catch (e) {
      failure = e;
    }
    return { out, failure };
  }

  it("text, reasoning and tool arguments count together; the chunk past the bound is not relayed and the stream fails with what was kept", async () => {
    const { out, failure } = await bounded([
      c({ role: "assistant", reasoning_content: "12345" }), c({ content: "abcde" }),
      c({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "f", arguments: "{\"a\":" } }] }), // 5: 15, at the bound
      c({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }), // past it
    ], 15);
    expect(failure).toMatchObject({ code: "UPSTREAM_ERROR", details: { reason: "answer_too_large", limit_bytes: 15, setting: "server.upstream_limits.answer_bytes" } });
    expect(out.filter((e) => e.type === "response.function_call_arguments.delta").map((e) => e.delta)).toEqual(["{\"a\":"]);
    const last = out.at(-1);
    expect(last.type).toBe("response.failed");
    expect(last.response.output.map((o: any) => o.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(last.response.output[2]).toMatchObject({ arguments: "{\"a\":", status: "incomplete" });
    // A code Codex CLI stops on (a server_error it sends again, five times, each cut the same way), the gateway's code named.
    expect(last.response.error).toEqual({ code: "invalid_prompt", message: expect.stringContaining(failure.message) });
    expect(last.response.error.message).toContain("UPSTREAM_ERROR answer_too_large");
  });

  it("logprobs count at their JSON size, not the chunk's: an answer whose text and logprobs fit is served whole, one past them is cut", async () => {
    const entry = { token: "a", logprob: -0.1, bytes: [97], top_logprobs: [] };
    const kept = "a".length + JSON.stringify([entry]).length; // what one chunk adds to the answer
    const chunks = Array.from({ length: 20 }, () => ({ ...c({}), choices: [{ index: 0, delta: { content: "a" }, logprobs: { content: [entry] }, finish_reason: null }] }));
    expect(JSON.stringify(chunks[0]).length).toBeGreaterThan(2 * kept); // the envelope is most of a chunk
    const whole = await bounded([...chunks, c({}, "stop")], 20 * kept);
    expect(whole.failure).toBeUndefined();
    expect(whole.out.at(-1).response.output[0].content[0].logprobs).toHaveLength(20);
    const cut = await bounded(chunks, 10 * kept);
    expect(cut.failure).toMatchObject({ details: { reason: "answer_too_large" } });
    expect(cut.out.filter((e) => e.type === "response.output_text.delta")).toHaveLength(10);
  });

  it("signed reasoning blocks (reasoning_details) count at their JSON size, not the chunk's", async () => {
    const details = [{ type: "reasoning.text", text: "think ", format: "anthropic-claude-v1", index: 0 }];
    const kept = "think ".length + JSON.stringify(details).length;
    const chunks = Array.from({ length: 20 }, () => ({ ...c({}), provider: "Anthropic", choices: [{ index: 0, delta: { role: "assistant", content: "", reasoning: "think ", reasoning_details: details }, finish_reason: null, native_finish_reason: null, logprobs: null }] }));
    expect(JSON.stringify(chunks[0]).length).toBeGreaterThan(kept + 100);
    const { out, failure } = await bounded([...chunks, c({}, "stop")], 20 * kept);
    expect(failure).toBeUndefined();
    expect(out.at(-1).type).toBe("response.completed");
  });

  it("a first chunk past the bound fails before the stream begins: nothing is sent, so the request fails whole", async () => {
    const { out, failure } = await bounded([c({ role: "assistant", content: "x".repeat(11) })], 10);
    expect(out).toEqual([]);
    expect(failure).toMatchObject({ details: { reason: "answer_too_large", limit_bytes: 10 } });
  });

  it("an answer within the bound is whole: the final event carries every piece, joined once", async () => {
    const words = Array.from({ length: 1000 }, (_, i) => ` w${i}`);
    const { out, failure } = await bounded([c({ role: "assistant", content: "" }), ...words.map((w) => c({ content: w })), c({}, "stop")], 1_000_000);
    expect(failure).toBeUndefined();
    expect(out.find((e) => e.type === "response.output_text.done").text).toBe(words.join(""));
    expect(out.at(-1).response.output[0].content[0].text).toBe(words.join(""));
  });
});

describe("the response's service_tier is the tier that served it", () => {
  it("the chat upstream's service_tier (a flex request to Groq), JSON and streamed; default when the upstream names none", async () => {
    const chat = { id: "c1", created: 1, model: "m", service_tier: "flex", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }] };
    expect((chatToResponse(chat, echoOf({ model: "m", input: "x", service_tier: "flex" }), { flavor: "chat", provider: "groq", show: true }) as any).service_tier).toBe("flex");
    const { service_tier: _, ...untiered } = chat;
    expect((chatToResponse(untiered, echoOf({ model: "m", input: "x" }), { flavor: "chat", provider: "groq", show: true }) as any).service_tier).toBe("default");
    const out = await run([c({ role: "assistant", content: "hi" }, null, { service_tier: "flex" }), c({}, "stop", { service_tier: "flex" })]);
    const tiers = out.filter((e) => e.response).map((e) => e.response.service_tier);
    expect(tiers.length).toBeGreaterThanOrEqual(3);
    expect(new Set(tiers)).toEqual(new Set(["flex"]));
  });

  it("a tier named only on the usage chunk after the finish (Bedrock Converse says it last) is the final response's", async () => {
    const usage = { id: "c1", created: 1, model: "m", choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, service_tier: "flex" };
    const out = await run([c({ role: "assistant", content: "hi" }), c({}, "stop"), usage]);
    const done = out.find((e) => e.type === "response.completed");
    expect(done.response.service_tier).toBe("flex");
    expect(done.response.usage).toMatchObject({ input_tokens: 1 });
  });
});

describe("chat chunks citing web sources -> Responses events", () => {
  const cite = (url: string, start: number, end: number) => ({ type: "url_citation", url_citation: { start_index: start, end_index: end, url, title: "T " + url } });

  it("annotations are output_text.annotation.added events after a web_search_call item, and the final response carries them as the JSON one does", async () => {
    const chunks = [
      c({ role: "assistant", content: "It is “sunny”" }), c({ content: " in Paris." }),
      c({ annotations: [cite("https://a.example/", 0, 13), cite("https://b.example/", 14, 23)] }),
      c({}, "stop"),
      { id: "c1", choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } },
    ];
    const out = await run(chunks);
    const added = out.filter((e) => e.type === "response.output_text.annotation.added");
    const message = out.find((e) => e.type === "response.output_item.added" && e.item.type === "message");
    const expected = [
      { type: "url_citation", start_index: 0, end_index: 13, url: "https://a.example/", title: "T https://a.example/" },
      { type: "url_citation", start_index: 14, end_index: 23, url: "https://b.example/", title: "T https://b.example/" },
    ];
    expect(added.map((e) => [e.item_id, e.output_index, e.content_index, e.annotation_index, e.annotation])).toEqual(
      expected.map((a, i) => [message.item.id, message.output_index, 0, i, a]),
    );
    const search = out.filter((e) => e.type.startsWith("response.web_search_call.") || e.item?.type === "web_search_call").map((e) => e.type);
    expect(search).toEqual(["response.output_item.added", "response.web_search_call.in_progress", "response.web_search_call.searching", "response.web_search_call.completed", "response.output_item.done"]);
    const final = out.at(-1).response;
    const text = final.output.find((o: any) => o.type === "message").content[0];
    expect(text.text.slice(0, 13)).toBe("It is “sunny”");
    expect(text.annotations).toEqual(expected);
    expect(out.find((e) => e.type === "response.content_part.done").part.annotations).toEqual(expected);
    expect(final.output.map((o: any) => o.type).sort()).toEqual(["message", "web_search_call"]);
  });

  it("annotations count from the output_text part they fall in, when the content went on after a tool call", async () => {
    const out = await run([
      c({ role: "assistant", content: "First." }),
      c({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "f", arguments: "{}" } }] }),
      c({ content: "Second." }), c({ annotations: [cite("https://a.example/", 6, 13)] }), c({}, "tool_calls"),
    ]);
    const added = out.find((e) => e.type === "response.output_text.annotation.added");
    expect(added.annotation).toMatchObject({ start_index: 0, end_index: 7 });
  });

  it("sources sent at the end (as Claude's interleaved thinking makes them) go to the part each cites, a closed one included", async () => {
    const out = await run([
      c({ role: "assistant", content: "Paris is the capital." }), c({ reasoning_content: "more" }), c({ content: " Lyon is second." }),
      c({ annotations: [cite("https://a.example/", 0, 21), cite("https://b.example/", 21, 37)] }), c({}, "stop"),
    ]);
    const messages = out.at(-1).response.output.filter((o: any) => o.type === "message");
    expect(messages.map((m: any) => [m.content[0].text, m.content[0].annotations.map((a: any) => [a.url, a.start_index, a.end_index])])).toEqual([
      ["Paris is the capital.", [["https://a.example/", 0, 21]]],
      [" Lyon is second.", [["https://b.example/", 0, 16]]],
    ]);
    const added = out.filter((e) => e.type === "response.output_text.annotation.added");
    expect(added.map((e) => [e.item_id, e.annotation_index])).toEqual([[messages[0].id, 0], [messages[1].id, 0]]);
  });

  it("a stream citing nothing adds no web_search_call and no annotation events", async () => {
    const out = await run([c({ role: "assistant", content: "Hi" }, "stop")]);
    expect(out.some((e) => e.type.includes("annotation") || e.type.includes("web_search"))).toBe(false);
  });
});
