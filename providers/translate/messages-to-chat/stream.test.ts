import { describe, expect, it } from "vitest";
import { ChatToMessagesStream } from "./stream.ts";

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ data: JSON.stringify({ id: "chatcmpl-1", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] }) });
const usage = (u: Record<string, unknown>) => ({ data: JSON.stringify({ id: "chatcmpl-1", model: "m", choices: [], usage: u }) });

/** The usage fields chat does not say, as a Messages answer carries them. */
const UNSAID_USAGE = { cache_creation: null, server_tool_use: null, service_tier: null, inference_geo: null, output_tokens_details: null, speed: null };

function run(events: { data: string }[]) {
  const t = new ChatToMessagesStream({ provider: "p" });
  const out = events.flatMap((e) => t.push(e));
  return out.map((e) => ({ event: e.event, ...JSON.parse(e.data) }));
}

describe("chat chunks -> messages events", () => {
  it("reference §3.11 example: text then two parallel tool calls, usage held until the usage chunk", () => {
    const out = run([
      chunk({ role: "assistant", content: "Sure" }),
      chunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "wx", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"c\":" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "\"SF\"}" } }] }),
      chunk({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "tm", arguments: "{}" } }] }),
      chunk({}, "tool_calls"),
      usage({ prompt_tokens: 50, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 10 } }),
      { data: "[DONE]" },
    ]);
    for (const e of out) expect(e.type).toBe(e.event);
    expect(out.map((e) => e.type + (e.index !== undefined ? e.index : ""))).toEqual([
      "message_start", "ping",
      "content_block_start0", "content_block_delta0", "content_block_stop0",
      // The arguments as they came, but the top-level closing brace, which waits for the block's end (tool-input-json.ts).
      "content_block_start1", "content_block_delta1", "content_block_delta1", "content_block_delta1", "content_block_stop1",
      "content_block_start2", "content_block_delta2", "content_block_delta2", "content_block_stop2",
      "message_delta", "message_stop",
    ]);
    expect(out.filter((e) => e.type === "content_block_delta" && e.index === 1).map((e) => e.delta.partial_json)).toEqual(["{\"c\":", "\"SF\"", "}"]);
    expect(out[0].message).toMatchObject({ id: "msg_1", role: "assistant", content: [], stop_reason: null, usage: { input_tokens: 0, output_tokens: 0 } });
    expect(out[5].content_block).toEqual({ type: "tool_use", id: "call_a", name: "wx", input: {}, caller: { type: "direct" } });
    expect(out[10].content_block).toEqual({ type: "tool_use", id: "call_b", name: "tm", input: {}, caller: { type: "direct" } });
    expect(out[14]).toMatchObject({ delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { input_tokens: 40, cache_read_input_tokens: 10, output_tokens: 20 } });
  });

  it("message_start states the input (clients such as @langchain/anthropic read it only there): the estimate it is given, or the upstream's count when the first chunk has it; message_delta the exact one", () => {
    const events = [chunk({ role: "assistant", content: "Hi" }), chunk({}, "stop"), usage({ prompt_tokens: 37, completion_tokens: 2 }), { data: "[DONE]" }];
    const t = new ChatToMessagesStream({ provider: "p", inputEstimate: 42 });
    const out = events.flatMap((e) => t.push(e)).map((e) => JSON.parse(e.data));
    expect(out[0].message.usage).toEqual({ ...UNSAID_USAGE, input_tokens: 42, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    expect(out.find((e) => e.type === "message_delta").usage).toMatchObject({ input_tokens: 37, output_tokens: 2 });
    // An upstream that sends usage on every chunk (some OpenAI-compatible hosts): its count, cached tokens apart.
    const early = new ChatToMessagesStream({ provider: "p", inputEstimate: 42 });
    const first = early.push({ data: JSON.stringify({ id: "c", model: "m", choices: [{ index: 0, delta: { content: "Hi" } }], usage: { prompt_tokens: 30, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 10 } } }) });
    expect(JSON.parse(first[0]!.data).message.usage).toEqual({ ...UNSAID_USAGE, input_tokens: 20, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 10 });
  });

  it("every field Anthropic's events have (the SDK types them required), null where chat does not say: usage in message_start and message_delta, a text block's citations", () => {
    const first = { data: JSON.stringify({ id: "chatcmpl-1", model: "m", service_tier: "default", choices: [{ index: 0, delta: { role: "assistant", content: "Hi" } }] }) };
    const out = run([first, chunk({}, "stop"), usage({ prompt_tokens: 37, completion_tokens: 2 }), { data: "[DONE]" }]);
    expect(out[0].message.usage).toEqual({ ...UNSAID_USAGE, input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, service_tier: "standard" });
    expect(out.find((e) => e.type === "content_block_start").content_block).toEqual({ type: "text", text: "", citations: null });
    expect(out.find((e) => e.type === "message_delta")).toEqual({
      event: "message_delta", type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { input_tokens: 37, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens_details: null, server_tool_use: null },
    });
  });

  it("an empty completion still gets message_start, message_delta and message_stop", () => {
    const out = run([chunk({ role: "assistant", content: "" }), chunk({}, "length"), { data: "[DONE]" }]);
    expect(out.map((e) => e.type)).toEqual(["message_start", "ping", "message_delta", "message_stop"]);
    expect(out[2].delta.stop_reason).toBe("max_tokens");
  });

  it("reasoning_content opens a thinking block before the text block", () => {
    const out = run([chunk({ role: "assistant", reasoning_content: "hmm" }), chunk({ content: "Hi" }), chunk({}, "stop"), { data: "[DONE]" }]);
    expect(out.filter((e) => e.type === "content_block_start").map((e) => [e.index, e.content_block.type])).toEqual([[0, "thinking"], [1, "text"]]);
  });

  it("an in-band error chunk throws; EOF before any finish throws; EOF after finish completes", () => {
    const t = new ChatToMessagesStream({ provider: "p" });
    expect(() => t.push({ data: JSON.stringify({ error: { message: "boom" } }) })).toThrow(/boom/);
    const cut = new ChatToMessagesStream({ provider: "p" });
    cut.push(chunk({ content: "x" }));
    expect(() => cut.end()).toThrow(/ended the stream early/);
    const ok = new ChatToMessagesStream({ provider: "p" });
    ok.push(chunk({ content: "x" }, "stop"));
    expect(ok.end().map((e) => e.event)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
  });
});

describe("parallel tool calls whose fragments interleave by index (reference §1.5, §3.11)", () => {
  /** Checks Anthropic's block order (start, deltas on that block, stop; one block at a time) and returns each block as a client sees it at its stop. */
  function blocksAtStop(out: any[]) {
    let open = -1;
    const blocks: any[] = [];
    for (const e of out) {
      if (e.type === "content_block_start") {
        expect(open).toBe(-1);
        expect(e.index).toBe(blocks.length);
        open = e.index;
        blocks.push({ ...e.content_block, json: "" });
      } else if (e.type === "content_block_delta") {
        expect(e.index).toBe(open);
        if (e.delta.type === "input_json_delta") blocks[open].json += e.delta.partial_json;
        if (e.delta.type === "text_delta") blocks[open].text += e.delta.text;
        if (e.delta.type === "thinking_delta") blocks[open].thinking += e.delta.thinking;
      } else if (e.type === "content_block_stop") {
        expect(e.index).toBe(open);
        open = -1;
      }
    }
    expect(open).toBe(-1);
    return blocks.map(({ json, ...b }) => (b.type === "tool_use" ? { ...b, input: json ? JSON.parse(json) : {} } : b));
  }

  // The frames of the audit's fake OpenAI upstream: two calls opened (id and name once each), then call 0's arguments
  // in 3-character fragments with call 1's "{}" after the third.
  const ARGS = '{"city": "São Paulo", "note": "", "q": "a\\"b\\\\c\\n", "nested": {"a": [1, 2.5, null, true]}, "emoji": "👋🏽", "cjk": "世界"}';
  const pieces = ARGS.match(/[\s\S]{1,3}/gu)!;
  const audit = [
    chunk({ role: "assistant", content: "", refusal: null }), chunk({ content: "Sur" }), chunk({ content: "e" }),
    chunk({ tool_calls: [{ index: 0, id: "call_A1", type: "function", function: { name: "get_weather", arguments: "" } }] }),
    chunk({ tool_calls: [{ index: 1, id: "call_B2", type: "function", function: { name: "get_time", arguments: "" } }] }),
    ...pieces.flatMap((p, k) => [chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] }), ...(k === 2 ? [chunk({ tool_calls: [{ index: 1, function: { arguments: "{}" } }] })] : [])]),
    chunk({}, "tool_calls"), usage({ prompt_tokens: 50, completion_tokens: 30 }), { data: "[DONE]" },
  ];

  it("the later call is held until the earlier block stops, then is its own block; no delta follows a stop", () => {
    const out = run(audit);
    expect(blocksAtStop(out)).toEqual([
      { type: "text", text: "Sure", citations: null },
      { type: "tool_use", id: "call_A1", name: "get_weather", input: JSON.parse(ARGS), caller: { type: "direct" } },
      { type: "tool_use", id: "call_B2", name: "get_time", input: {}, caller: { type: "direct" } },
    ]);
    // Call 1 starts as soon as call 0's arguments are whole (its last fragment), with what it had as one delta.
    const types = out.map((e) => e.type + (e.index ?? ""));
    expect(types.slice(types.lastIndexOf("content_block_delta1"))).toEqual([
      "content_block_delta1", "content_block_stop1", "content_block_start2", "content_block_delta2", "content_block_delta2", "content_block_stop2", "message_delta", "message_stop",
    ]);
    expect(out.filter((e) => e.index === 2 && e.type === "content_block_delta").map((e) => e.delta.partial_json)).toEqual(["{", "}"]);
  });

  it("a call whose arguments never become whole keeps the later ones held to the end; held calls keep collecting and keep their order", () => {
    const out = run([
      chunk({ tool_calls: [{ index: 0, id: "a", type: "function", function: { name: "f", arguments: "{\"x\":" } }] }),
      chunk({ tool_calls: [{ index: 2, id: "c", type: "function", function: { name: "h", arguments: "[1" } }] }),
      chunk({ tool_calls: [{ index: 1, id: "b", type: "function", function: { name: "g", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "\"}{\"" } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: "{\"y\"" } }, { index: 2, function: { arguments: ",2]" } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: ":2}" } }] }),
      chunk({}, "tool_calls"), { data: "[DONE]" },
    ]);
    const blocks = out.filter((e) => e.type === "content_block_start").map((e) => [e.index, e.content_block.id]);
    expect(blocks).toEqual([[0, "a"], [1, "c"], [2, "b"]]);
    const json = (i: number) => out.filter((e) => e.type === "content_block_delta" && e.index === i).map((e) => e.delta.partial_json).join("");
    // Call 0's arguments never closed, call 2's are an array: each block's input is the JSON path's rawInvalidInput.
    expect([JSON.parse(json(0)), json(1), json(2)]).toEqual([{ x: "}{", rawInvalidInput: "{\"x\":\"}{\"" }, "{\"rawInvalidInput\":[1,2]}", "{\"y\":2}"]);
    // Call 0 stayed open (its braces inside a string do not close it), so the others waited for the end.
    const types = out.map((e) => e.type + (e.index ?? ""));
    expect(types.indexOf("content_block_stop0")).toBeGreaterThan(types.lastIndexOf("content_block_delta0"));
    expect(types.slice(-2)).toEqual(["message_delta", "message_stop"]);
    blocksAtStop(out.map((e) => (e.type === "content_block_delta" ? { ...e, delta: { type: "other" } } : e)));
  });

  it("calls sent one after another still stream live: a whole call's block stops when the next starts", () => {
    const out = run([
      chunk({ tool_calls: [{ index: 0, id: "a", type: "function", function: { name: "f", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"s\":\"\\\"}\"" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "}" } }] }),
      chunk({ tool_calls: [{ index: 1, id: "b", type: "function", function: { name: "g", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: "{}" } }] }),
    ]);
    expect(out.map((e) => e.type + (e.index ?? ""))).toEqual([
      "message_start", "ping", "content_block_start0", "content_block_delta0", "content_block_delta0",
      "content_block_stop0", "content_block_start1", "content_block_delta1",
    ]);
  });

  it("text while a call is held waits for the open call's arguments; the held call and the text follow in order, nothing dropped", () => {
    const out = run([
      chunk({ tool_calls: [{ index: 0, id: "a", type: "function", function: { name: "f", arguments: "{\"m\":" } }] }),
      chunk({ tool_calls: [{ index: 1, id: "b", type: "function", function: { name: "g", arguments: "{\"n\":" } }] }),
      chunk({ content: "and" }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: "1}" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "2}" } }] }),
      chunk({}, "tool_calls"), { data: "[DONE]" },
    ]);
    expect(blocksAtStop(out).map((b) => [b.id ?? b.text, b.input])).toEqual([["a", { m: 2 }], ["b", { n: 1 }], ["and", undefined]]);
  });

  it("text or reasoning between one call's argument fragments (DeepSeek's reasoning_content) waits until its arguments are whole: the call keeps every fragment", () => {
    const out = run([
      chunk({ role: "assistant", reasoning_content: "Let me" }),
      chunk({ tool_calls: [{ index: 0, id: "call_w", type: "function", function: { name: "get_weather", arguments: "{\"city\":" } }] }),
      chunk({ reasoning_content: " check" }), chunk({ reasoning_content: " again" }), chunk({ content: "One" }), chunk({ content: " moment" }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: " \"Paris\"" } }] }),
      chunk({ content: "," }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "}" } }] }),
      chunk({ content: " done" }),
      chunk({}, "tool_calls"), { data: "[DONE]" },
    ]);
    expect(blocksAtStop(out).map((b) => [b.type, b.input ?? b.text ?? b.thinking])).toEqual([
      ["thinking", "Let me"],
      ["tool_use", { city: "Paris" }],
      ["thinking", " check again"],
      ["text", "One moment, done"],
    ]);
    // The held reasoning still closes with its signature, as every thinking block does.
    const sigs = out.filter((e) => e.delta?.type === "signature_delta").map((e) => e.index);
    expect(sigs).toEqual([0, 2]);
  });

  /** Feeds chunks one at a time; returns each chunk's events, parsed, so a test can see what was out before what. */
  function stepwise() {
    const t = new ChatToMessagesStream({ provider: "p" });
    return (...cs: { data: string }[]) => cs.flatMap((c) => t.push(c)).map((e) => ({ event: e.event, ...JSON.parse(e.data) }));
  }

  it("reasoning between a call's header (arguments \"\") and its first argument bytes streams live, and the call keeps every byte", () => {
    const feed = stepwise();
    const head = feed(
      chunk({ role: "assistant", content: null }),
      chunk({ tool_calls: [{ index: 0, id: "call_w", type: "function", function: { name: "get_weather", arguments: "" } }] }),
      chunk({ reasoning_content: "Paris, then." }),
    );
    // The reasoning is out before any argument byte is fed.
    expect(head.filter((e) => e.delta?.type === "thinking_delta").map((e) => e.delta.thinking)).toEqual(["Paris, then."]);
    const rest = feed(
      chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"city\":" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: " \"Paris\"}" } }] }),
      chunk({}, "tool_calls"), { data: "[DONE]" },
    );
    expect(blocksAtStop([...head, ...rest]).map((b) => [b.type, b.input ?? b.thinking])).toEqual([
      ["thinking", "Paris, then."],
      ["tool_use", { city: "Paris" }],
    ]);
    expect(rest.find((e) => e.type === "content_block_start").content_block).toMatchObject({ type: "tool_use", id: "call_w", name: "get_weather" });
  });

  it("text between a call's header (arguments \"\") and its first argument bytes streams live, and the call keeps every byte", () => {
    const feed = stepwise();
    const head = feed(
      chunk({ role: "assistant", content: "" }),
      chunk({ tool_calls: [{ index: 0, id: "call_w", type: "function", function: { name: "get_weather", arguments: "" } }] }),
      chunk({ content: "Checking" }),
      chunk({ content: " now." }),
    );
    expect(head.filter((e) => e.delta?.type === "text_delta").map((e) => e.delta.text)).toEqual(["Checking", " now."]);
    const rest = feed(
      chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"city\": \"Par" } }] }),
      chunk({ content: " (held)" }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "is\"}" } }] }),
      chunk({}, "tool_calls"), { data: "[DONE]" },
    );
    expect(blocksAtStop([...head, ...rest]).map((b) => [b.type, b.input ?? b.text])).toEqual([
      ["text", "Checking now."],
      ["tool_use", { city: "Paris" }],
      ["text", " (held)"],
    ]);
  });

  it("text after a no-parameter call whose arguments are \"\" (its host never sends \"{}\") goes out as it comes; the call's block follows at the finish with input {}", () => {
    const feed = stepwise();
    const before = feed(
      chunk({ role: "assistant", content: "" }),
      chunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "now", arguments: "" } }] }),
      chunk({ content: "t0 " }),
      chunk({ content: "t1 " }),
    );
    // Both texts are out before the finish chunk is fed.
    expect(before.filter((e) => e.delta?.type === "text_delta").map((e) => e.delta.text)).toEqual(["t0 ", "t1 "]);
    expect(before.map((e) => e.type + (e.index ?? ""))).toEqual(["message_start", "ping", "content_block_start0", "content_block_delta0", "content_block_delta0"]);
    const rest = feed(chunk({}, "tool_calls"), { data: "[DONE]" });
    expect(rest.map((e) => e.type + (e.index ?? ""))).toEqual([
      "content_block_stop0", "content_block_start1", "content_block_stop1", "message_delta", "message_stop",
    ]);
    expect(blocksAtStop([...before, ...rest])).toEqual([
      { type: "text", text: "t0 t1 ", citations: null },
      { type: "tool_use", id: "call_a", name: "now", input: {}, caller: { type: "direct" } },
    ]);
    expect(rest.find((e) => e.type === "message_delta").delta.stop_reason).toBe("tool_use");
  });

  it("parallel calls whose headers all come first (arguments \"\"): each block opens at its first argument bytes, reasoning and text between stream live, no byte is lost", () => {
    const feed = stepwise();
    const out = feed(
      chunk({ role: "assistant", content: null }),
      chunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "fa", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "fb", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 2, id: "call_c", type: "function", function: { name: "fc", arguments: "" } }] }),
      chunk({ reasoning_content: "both" }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: "{\"b\":" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"a\":1}" } }] }),
      chunk({ content: "wait" }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: "2}" } }] }),
      chunk({ content: "ed" }),
      chunk({}, "tool_calls"), { data: "[DONE]" },
    );
    expect(blocksAtStop(out).map((b) => [b.type, b.id ?? b.text ?? b.thinking, b.input])).toEqual([
      ["thinking", "both", undefined],
      ["tool_use", "call_b", { b: 2 }],
      ["tool_use", "call_a", { a: 1 }],
      ["text", "waited", undefined],
      ["tool_use", "call_c", {}],
    ]);
  });

  it("text held behind a call whose arguments never become whole follows it at the end of the stream", () => {
    const out = run([
      chunk({ tool_calls: [{ index: 0, id: "a", type: "function", function: { name: "f", arguments: "{\"x\":" } }] }),
      chunk({ content: "tail" }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "1" } }] }),
      chunk({}, "tool_calls"), { data: "[DONE]" },
    ]);
    const json = out.filter((e) => e.type === "content_block_delta" && e.index === 0).map((e) => e.delta.partial_json).join("");
    expect(JSON.parse(json)).toEqual({ x: null, rawInvalidInput: "{\"x\":1" });
    expect(out.filter((e) => e.type === "content_block_start").map((e) => e.content_block.type)).toEqual(["tool_use", "text"]);
    expect(out.find((e) => e.delta?.type === "text_delta")).toMatchObject({ index: 1, delta: { text: "tail" } });
  });
});
