import { describe, expect, it } from "vitest";
import type { SseEvent } from "../../../core/sse/parse.ts";
import { runFor } from "../testkit.ts";
import { guardStream } from "./index.ts";
import { Slots } from "./slots.ts";
import { MessagesStream } from "./messages.ts";

const PII = { rules: [{ name: "pii", detect: ["email" as const], action: "redact" as const }] };

async function through(protocol: "openai" | "anthropic" | "responses" | "gemini", events: SseEvent[]): Promise<SseEvent[]> {
  const run = runFor(PII, protocol);
  run.input("write to alice@example.com", false); // hands out [EMAIL_1]
  const out: SseEvent[] = [];
  for await (const ev of guardStream(run.ctx, run, (async function* () { yield* events; })())) out.push(ev);
  return out;
}

const NO_SECRETS = { rules: [{ name: "no-secrets", detect: ["secret" as const], on: ["output" as const] }] };

/** Streams `events` through the output guard with a secret-blocking rule: what reached the client, and what it threw. */
async function refused(protocol: "openai" | "responses", events: SseEvent[]): Promise<{ out: SseEvent[]; err: any }> {
  const run = runFor(NO_SECRETS, protocol);
  const out: SseEvent[] = [];
  try {
    for await (const ev of guardStream(run.ctx, run, (async function* () { yield* events; })())) out.push(ev);
  } catch (e) {
    return { out, err: e };
  }
  return { out, err: undefined };
}

const json = (evs: SseEvent[]) => evs.map((e) => (e.data === "[DONE]" ? e.data : JSON.parse(e.data)));

describe("stream adapters restore placeholders cut across events", () => {
  it("chat: content and tool-call arguments, the rest flushed into the finish chunk", async () => {
    const chunk = (delta: object, finish: string | null = null) => ({ data: JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }) });
    const out = json(await through("openai", [
      chunk({ content: "To [EMA" }),
      chunk({ content: "IL_1]. Also [EMAIL_" }),
      chunk({ tool_calls: [{ index: 0, id: "call_1", function: { name: "send", arguments: '{"to":"[EMAIL' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '_1]"}' } }] }),
      chunk({}, "stop"),
      { data: "[DONE]" },
    ]));
    const text = out.slice(0, -1).map((c: any) => c.choices[0].delta.content ?? "").join("");
    const args = out.slice(0, -1).flatMap((c: any) => c.choices[0].delta.tool_calls ?? []).map((t: any) => t.function.arguments).join("");
    expect(text).toBe("To alice@example.com. Also [EMAIL_"); // the unfinished one is sent as it came, with the finish
    expect(JSON.parse(args)).toEqual({ to: "alice@example.com" });
    expect(out.at(-1)).toBe("[DONE]");
  });

  it("chat: an audio answer's transcript restored, its rest flushed into the finish chunk", async () => {
    const chunk = (delta: object, finish: string | null = null) => ({ data: JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }) });
    const out = json(await through("openai", [
      chunk({ audio: { id: "audio_1", data: "UklGR", transcript: "Mail [EMA" } }),
      chunk({ audio: { transcript: "IL_1] or [EMAIL" } }),
      chunk({}, "stop"),
      { data: "[DONE]" },
    ]));
    const transcript = out.slice(0, -1).map((c: any) => c.choices[0].delta.audio?.transcript ?? "").join("");
    expect(transcript).toBe("Mail alice@example.com or [EMAIL");
    expect(out[0].choices[0].delta.audio.data).toBe("UklGR");
  });

  it("messages: a block's rest goes out as one more delta right before its content_block_stop", async () => {
    const ev = (event: string, data: object) => ({ event, data: JSON.stringify({ type: event, ...data }) });
    const out = await through("anthropic", [
      ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
      ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Hi [EMAIL_1" } }),
      ev("content_block_stop", { index: 0 }),
      ev("content_block_start", { index: 1, content_block: { type: "tool_use", id: "t1", name: "send", input: {} } }),
      ev("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: '{"to": "[EMA' } }),
      ev("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: 'IL_1]"}' } }),
      ev("content_block_stop", { index: 1 }),
      ev("message_stop", {}),
    ]);
    expect(out.map((e) => e.event)).toEqual([
      "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
      "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_stop",
    ]);
    const deltas = json(out).filter((d: any) => d.type === "content_block_delta");
    expect(deltas.filter((d: any) => d.index === 0).map((d: any) => d.delta.text).join("")).toBe("Hi [EMAIL_1");
    expect(JSON.parse(deltas.filter((d: any) => d.index === 1).map((d: any) => d.delta.partial_json).join(""))).toEqual({ to: "alice@example.com" });
  });

  it("messages: a server tool's query (server_tool_use) restored, its rest sent as input_json_delta", async () => {
    const ev = (event: string, data: object) => ({ event, data: JSON.stringify({ type: event, ...data }) });
    const out = json(await through("anthropic", [
      ev("content_block_start", { index: 0, content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} } }),
      ev("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: '{"query": "[EMAIL_1] or [EMA' } }),
      ev("content_block_stop", { index: 0 }),
      ev("message_stop", {}),
    ]));
    const deltas = out.filter((d: any) => d.type === "content_block_delta");
    expect(deltas.map((d: any) => d.delta.type)).toEqual(["input_json_delta", "input_json_delta"]);
    expect(deltas.map((d: any) => d.delta.partial_json).join("")).toBe('{"query": "alice@example.com or [EMA');
  });

  it("messages: what a server tool or an MCP server answered, whole in its content_block_start, restored", async () => {
    const ev = (event: string, data: object) => ({ event, data: JSON.stringify({ type: event, ...data }) });
    const out = json(await through("anthropic", [
      ev("content_block_start", { index: 0, content_block: { type: "code_execution_tool_result", tool_use_id: "s1", content: { type: "code_execution_result", stdout: "sent [EMAIL_1]", stderr: "", return_code: 0, content: [] } } }),
      ev("content_block_stop", { index: 0 }),
      ev("content_block_start", { index: 1, content_block: { type: "mcp_tool_result", tool_use_id: "m1", is_error: false, content: [{ type: "text", text: "row [EMAIL_1]" }] } }),
      ev("content_block_stop", { index: 1 }),
      ev("message_stop", {}),
    ]));
    const starts = out.filter((d: any) => d.type === "content_block_start").map((d: any) => d.content_block);
    expect(starts[0].content.stdout).toBe("sent alice@example.com");
    expect(starts[1].content[0].text).toBe("row alice@example.com");
  });

  it("responses: deltas, done events and the final response restored; an inserted delta keeps sequence numbers consecutive", async () => {
    let seq = 0;
    const ev = (type: string, data: object) => ({ event: type, data: JSON.stringify({ type, sequence_number: seq++, ...data }) });
    const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
    const out = await through("responses", [
      ev("response.created", { response: { id: "r1", output: [] } }),
      ev("response.output_text.delta", { ...at, delta: "Mail [EMAIL_1] or [EMAIL" }),
      ev("response.output_text.done", { ...at, text: "Mail [EMAIL_1] or [EMAIL" }),
      ev("response.output_item.done", { output_index: 0, item: { type: "message", id: "msg_1", content: [{ type: "output_text", text: "Mail [EMAIL_1] or [EMAIL" }] } }),
      ev("response.completed", { response: { id: "r1", output: [{ type: "message", id: "msg_1", content: [{ type: "output_text", text: "Mail [EMAIL_1] or [EMAIL" }] }] } }),
    ]);
    const d = json(out);
    expect(d.map((x: any) => x.sequence_number)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(d.filter((x: any) => x.type === "response.output_text.delta").map((x: any) => x.delta).join("")).toBe("Mail alice@example.com or [EMAIL");
    expect(d[3].text).toBe("Mail alice@example.com or [EMAIL");
    expect(d[5].response.output[0].content[0].text).toBe("Mail alice@example.com or [EMAIL");
  });

  it("responses: a custom tool call's input deltas and its .done event restored, the held rest inserted before .done", async () => {
    let seq = 0;
    const ev = (type: string, data: object) => ({ event: type, data: JSON.stringify({ type, sequence_number: seq++, ...data }) });
    const at = { item_id: "ctc_1", output_index: 0 };
    const item = { type: "custom_tool_call", id: "ctc_1", call_id: "call_1", name: "run_sql", input: "where to = '[EMAIL_1]' or [EMAIL" };
    const d = json(await through("responses", [
      ev("response.output_item.added", { output_index: 0, item: { ...item, input: "" } }),
      ev("response.custom_tool_call_input.delta", { ...at, delta: "where to = '[EMA" }),
      ev("response.custom_tool_call_input.delta", { ...at, delta: "IL_1]' or [EMAIL" }),
      ev("response.custom_tool_call_input.done", { ...at, input: item.input }),
      ev("response.output_item.done", { output_index: 0, item }),
    ]));
    const deltas = d.filter((x: any) => x.type === "response.custom_tool_call_input.delta");
    expect(deltas.map((x: any) => x.delta).join("")).toBe("where to = 'alice@example.com' or [EMAIL");
    expect(d.find((x: any) => x.type === "response.custom_tool_call_input.done").input).toBe("where to = 'alice@example.com' or [EMAIL");
    expect(d.map((x: any) => x.sequence_number)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it.each([
    ["mcp_call", "response.mcp_call_arguments", "arguments", '{"to":"[EMA', 'IL_1]","cc":"[EMAIL"}', '{"to":"alice@example.com","cc":"[EMAIL"}'],
    ["code_interpreter_call", "response.code_interpreter_call_code", "code", "send('[EMA", "IL_1]') # [EMAIL", "send('alice@example.com') # [EMAIL"],
  ])("responses: a streamed %s's deltas, .done and item restored, any held rest inserted before .done", async (type, prefix, field, a, b, want) => {
    let seq = 0;
    const ev = (t: string, data: object) => ({ event: t, data: JSON.stringify({ type: t, sequence_number: seq++, ...data }) });
    const at = { item_id: "it_1", output_index: 0 };
    const whole = a + b;
    const item = type === "mcp_call"
      ? { type, id: "it_1", server_label: "crm", name: "send", arguments: whole, output: "sent [EMAIL_1]" }
      : { type, id: "it_1", container_id: "c", code: whole, outputs: [{ type: "logs", logs: "sent [EMAIL_1]" }] };
    const d = json(await through("responses", [
      ev(`${prefix}.delta`, { ...at, delta: a }),
      ev(`${prefix}.delta`, { ...at, delta: b }),
      ev(`${prefix}.done`, { ...at, [field]: whole }),
      ev("response.output_item.done", { output_index: 0, item }),
      ev("response.completed", { response: { id: "r1", output: [item] } }),
    ]));
    expect(d.filter((x: any) => x.type === `${prefix}.delta`).map((x: any) => x.delta).join("")).toBe(want);
    expect(d.find((x: any) => x.type === `${prefix}.done`)[field]).toBe(want);
    for (const it of [d.find((x: any) => x.type === "response.output_item.done").item, d.at(-1).response.output[0]]) {
      expect(it[field]).toBe(want);
      expect(type === "mcp_call" ? it.output : it.outputs[0].logs).toBe("sent alice@example.com");
    }
    expect(d.map((x: any) => x.sequence_number)).toEqual(d.map((_: unknown, i: number) => i));
  });

  it("responses: a key in streamed MCP call arguments is refused before the client sees it", async () => {
    const key = "sk-ant-api03-" + "A".repeat(93) + "AA";
    const at = { item_id: "mcp_1", output_index: 0 };
    const events = [
      { event: "response.mcp_call_arguments.delta", data: JSON.stringify({ type: "response.mcp_call_arguments.delta", sequence_number: 0, ...at, delta: '{"key":"' + key.slice(0, 40) }) },
      { event: "response.mcp_call_arguments.delta", data: JSON.stringify({ type: "response.mcp_call_arguments.delta", sequence_number: 1, ...at, delta: key.slice(40) + '"}' }) },
    ];
    const { out, err } = await refused("responses", events);
    expect(err?.code).toBe("GUARDRAIL_BLOCKED");
    expect(out.map((e) => e.data).join("")).not.toContain("AAAA");
  });

  it("messages: a text editor str_replace result's lines, whole in its content_block_start, restored", async () => {
    const ev = (event: string, data: object) => ({ event, data: JSON.stringify({ type: event, ...data }) });
    const out = json(await through("anthropic", [
      ev("content_block_start", { index: 0, content_block: { type: "text_editor_code_execution_tool_result", tool_use_id: "s1", content: { type: "text_editor_code_execution_str_replace_result", old_start: 1, old_lines: 1, new_start: 1, new_lines: 1, lines: ["-x", "+to [EMAIL_1]"] } } }),
      ev("content_block_stop", { index: 0 }),
      ev("message_stop", {}),
    ]));
    expect(out[0].content_block.content.lines).toEqual(["-x", "+to alice@example.com"]);
  });

  it("messages: a block of an unknown type, whole in its content_block_start, and an unknown delta restored in place; thinking left", async () => {
    const ev = (event: string, data: object) => ({ event, data: JSON.stringify({ type: event, ...data }) });
    const out = json(await through("anthropic", [
      ev("content_block_start", { index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }),
      ev("content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking: "mail [EMAIL_1]" } }),
      ev("content_block_delta", { index: 0, delta: { type: "signature_delta", signature: "[EMAIL_1]" } }),
      ev("content_block_stop", { index: 0 }),
      ev("content_block_start", { index: 1, content_block: { type: "compaction", content: null } }),
      ev("content_block_delta", { index: 1, delta: { type: "compaction_delta", content: "Summary: mail [EMAIL_1]", encrypted_content: "RW5j" } }),
      ev("content_block_stop", { index: 1 }),
      ev("content_block_start", { index: 2, content_block: { type: "advisor_note", note: { lines: ["to [EMAIL_1]"] } } }),
      ev("content_block_stop", { index: 2 }),
      ev("message_stop", {}),
    ]));
    expect(out.map((e: any) => e.delta ?? e.content_block ?? e.type)).toEqual([
      { type: "thinking", thinking: "", signature: "" },
      { type: "thinking_delta", thinking: "mail [EMAIL_1]" },
      { type: "signature_delta", signature: "[EMAIL_1]" },
      "content_block_stop",
      { type: "compaction", content: null },
      { type: "compaction_delta", content: "Summary: mail alice@example.com", encrypted_content: "RW5j" },
      "content_block_stop",
      { type: "advisor_note", note: { lines: ["to alice@example.com"] } },
      "content_block_stop",
      "message_stop",
    ]);
  });

  it("messages: what unknown blocks and deltas hold is part of the answer output moderation judges", () => {
    const slots = new Slots(runFor(PII, "anthropic"), true);
    const stream = new MessagesStream(slots);
    const ev = (event: string, data: object) => ({ event, data: JSON.stringify({ type: event, ...data }) });
    stream.onEvent(ev("content_block_start", { index: 0, content_block: { type: "advisor_note", note: "build the device" } }));
    stream.onEvent(ev("content_block_delta", { index: 1, delta: { type: "compaction_delta", content: " step by step" } }));
    expect(slots.answer).toBe("build the device step by step");
  });

  it("responses: shell commands, a patch's diff and a web search query restored at output_item.done and in the final response", async () => {
    let seq = 0;
    const ev = (t: string, data: object) => ({ event: t, data: JSON.stringify({ type: t, sequence_number: seq++, ...data }) });
    const items = [
      { type: "shell_call", id: "sh_1", call_id: "c1", status: "completed", action: { commands: ["git config user.email [EMAIL_1]"], timeout_ms: null, max_output_length: null } },
      { type: "apply_patch_call", id: "ap_1", call_id: "c2", status: "completed", operation: { type: "create_file", path: "a.txt", diff: "+[EMAIL_1]\n" } },
      { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "[EMAIL_1]" } },
    ];
    const d = json(await through("responses", [
      ...items.map((item, i) => ev("response.output_item.done", { output_index: i, item })),
      ev("response.completed", { response: { id: "r1", output: items } }),
    ]));
    const e = "alice@example.com";
    for (const [sh, ap, ws] of [d.slice(0, 3).map((x: any) => x.item), d[3].response.output]) {
      expect([sh.action.commands[0], ap.operation.diff, ws.action.query]).toEqual([`git config user.email ${e}`, `+${e}\n`, e]);
    }
  });

  it("responses: the instructions the events carrying the response echo are the client's, placeholders restored", async () => {
    const response = (instructions: unknown) => ({ id: "r1", instructions, output: [] });
    const out = json(await through("responses", [
      { event: "response.created", data: JSON.stringify({ type: "response.created", sequence_number: 0, response: response("Reply to [EMAIL_1].") }) },
      { event: "response.in_progress", data: JSON.stringify({ type: "response.in_progress", sequence_number: 1, response: response([{ role: "developer", content: [{ type: "input_text", text: "cc [EMAIL_1]" }] }]) }) },
      { event: "response.completed", data: JSON.stringify({ type: "response.completed", sequence_number: 2, response: response("Reply to [EMAIL_1].") }) },
    ]));
    expect(out.map((e: any) => e.response.instructions)).toEqual([
      "Reply to alice@example.com.",
      [{ role: "developer", content: [{ type: "input_text", text: "cc alice@example.com" }] }],
      "Reply to alice@example.com.",
    ]);
  });

  it("gemini: text parts per candidate, the rest put into the chunk with the finishReason", async () => {
    const chunk = (text: string, finish?: string) => ({ data: JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0, ...(finish ? { finishReason: finish } : {}) }] }) });
    const out = json(await through("gemini", [chunk("Sent to [EMA"), chunk("IL_1] and [EMAIL_1"), chunk("", "STOP")]));
    expect(out.map((c: any) => c.candidates[0].content.parts.map((p: any) => p.text).join("")).join("")).toBe("Sent to alice@example.com and [EMAIL_1");
    expect(out).toHaveLength(3);
  });

  it("gemini: no empty text part beside another: the held rest fills the finish's empty part, an emptied part is left out", async () => {
    const chunk = (parts: object[], extra: object = {}) => ({ data: JSON.stringify({ candidates: [{ content: { role: "model", parts }, index: 0, ...extra }], modelVersion: "g" }) });
    const call = { functionCall: { name: "send", args: { to: "[EMAIL_1]" } } };
    const sent = { functionCall: { name: "send", args: { to: "alice@example.com" } } };
    const events = [chunk([{ text: "Sent to [EMA" }]), chunk([{ text: "IL_1" }]), chunk([call, { text: "] and [EMAIL" }]), chunk([{ text: "" }], { finishReason: "STOP" })];
    const out = json(await through("gemini", events));
    // The second chunk's text was held whole: it keeps one empty text part (nothing else to carry); the third's call
    // goes without the text part the window emptied; the finish's empty part carries the rest.
    expect(out.map((c: any) => c.candidates[0].content.parts)).toEqual([[{ text: "Sent to " }], [{ text: "" }], [sent, { text: "alice@example.com and " }], [{ text: "[EMAIL" }]]);
    expect(out.at(-1).candidates[0].finishReason).toBe("STOP");
    const held = json(await through("gemini", [chunk([{ text: "Sent to [EMA" }]), chunk([call, { text: "IL_1" }]), chunk([{ text: "" }], { finishReason: "STOP" })]));
    expect(held.map((c: any) => c.candidates[0].content.parts)).toEqual([[{ text: "Sent to " }], [sent], [{ text: "[EMAIL_1" }]]);
  });

  it("gemini: code the model ran and its output, each whole in a chunk, restored", async () => {
    const parts = [{ executableCode: { language: "PYTHON", code: "send('[EMAIL_1]')" } }, { codeExecutionResult: { outcome: "OUTCOME_OK", output: "sent [EMAIL_1]" } }];
    const out = json(await through("gemini", [{ data: JSON.stringify({ candidates: [{ content: { role: "model", parts }, index: 0, finishReason: "STOP" }] }) }]));
    const [code, result] = out[0].candidates[0].content.parts;
    expect([code.executableCode.code, result.codeExecutionResult.output]).toEqual(["send('alice@example.com')", "sent alice@example.com"]);
  });
});

describe("stream adapters check tool-call arguments as they decode", () => {
  it("responses: a key in a custom tool call's streamed input is refused before the client sees any of it", async () => {
    let seq = 0;
    const ev = (type: string, data: object) => ({ event: type, data: JSON.stringify({ type, sequence_number: seq++, ...data }) });
    const at = { item_id: "ctc_1", output_index: 0 };
    const key = "sk-ant-api03-" + "A".repeat(93) + "AA";
    const events = [
      ev("response.custom_tool_call_input.delta", { ...at, delta: "update keys set v = '" + key.slice(0, 30) }),
      ev("response.custom_tool_call_input.delta", { ...at, delta: key.slice(30) + "'" }),
      ev("response.custom_tool_call_input.done", { ...at, input: `update keys set v = '${key}'` }),
    ];
    const { out, err } = await refused("responses", events);
    expect(err?.code).toBe("GUARDRAIL_BLOCKED");
    expect(out.map((e) => e.data).join("")).not.toContain("sk-ant");
  });

  it("responses: a key in a shell call sent whole in output_item.added is refused before the client sees it", async () => {
    let seq = 0;
    const ev = (type: string, data: object) => ({ event: type, data: JSON.stringify({ type, sequence_number: seq++, ...data }) });
    const key = "sk-ant-api03-" + "A".repeat(93) + "AA";
    const item = { type: "shell_call", id: "sh_1", call_id: "c1", status: "in_progress", action: { commands: [`export KEY=${key}`] } };
    const events = [
      ev("response.output_item.added", { output_index: 0, item }),
      ev("response.output_item.done", { output_index: 0, item: { ...item, status: "completed" } }),
    ];
    const { out, err } = await refused("responses", events);
    expect(err?.code).toBe("GUARDRAIL_BLOCKED");
    expect(out.map((e) => e.data).join("")).not.toContain("sk-ant");
  });

  it("chat: a key written with JSON escapes in streamed arguments is refused before the client sees it", async () => {
    const chunk = (delta: object, finish: string | null = null) => ({ data: JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }) });
    const args = '{"q":"\\u0047lobex \\u0066alcon s\\u006b-ant-api03-' + "A".repeat(93) + 'AA"}';
    const events = [
      chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] }),
      chunk({}, "tool_calls"),
      { data: "[DONE]" },
    ];
    const { out, err } = await refused("openai", events);
    expect(err?.code).toBe("GUARDRAIL_BLOCKED");
    expect(out.map((e) => e.data).join("")).not.toContain("AAAA");
  });
});

describe("a stream a block rule cuts: the text before the match that had cleared the window goes out in the protocol's shape, then the error", () => {
  const CLEAN = "AAAAAAAAAA BBBBBBBBBB CCCCCCCCCC DDDDDDDDDD EEEEEEEEEE FFFFFFFFFF GGGGGGGGGG HHHHHHHHHH invoice token ";
  const ANSWER = CLEAN + "ghp_abcdefghijklmnopqrstuvwxyz0123456789 then more text after it.";
  const pieces = (size: number) => ANSWER.match(new RegExp(`.{1,${size}}`, "gs"))!;
  /** What the client gets in pieces of `size`: the key is a hit once its last character has come; the text 64
   *  characters (the window) behind the end of that piece had cleared the window, never past where the key starts. */
  const sentIn = (size: number) => CLEAN.slice(0, Math.ceil((CLEAN.length + 40) / size) * size - 64);

  /** Streams `events` with the secret-blocking rule (window 64): what reached the client, and the refusal. */
  async function cut(protocol: "openai" | "anthropic" | "responses" | "gemini", events: SseEvent[]): Promise<{ out: SseEvent[]; err: any }> {
    const run = runFor({ ...NO_SECRETS, stream_window: 64 }, protocol);
    const out: SseEvent[] = [];
    try {
      for await (const ev of guardStream(run.ctx, run, (async function* () { yield* events; })())) out.push(ev);
    } catch (e) {
      return { out, err: e };
    }
    return { out, err: undefined };
  }

  it.each([3, ANSWER.length])("chat, in pieces of %d: chunks of content, the last one without a finish_reason", async (size) => {
    const chunk = (delta: object, finish: string | null = null) => ({ data: JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] }) });
    const { out, err } = await cut("openai", [...pieces(size).map((p) => chunk({ content: p })), chunk({}, "stop"), { data: "[DONE]" }]);
    expect(err?.code).toBe("GUARDRAIL_BLOCKED");
    const d = json(out);
    expect(d.map((c: any) => c.choices[0].delta.content ?? "").join("")).toBe(sentIn(size));
    expect(d.at(-1)).toMatchObject({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, finish_reason: null }] });
  });

  it.each([3, ANSWER.length])("messages, in pieces of %d: text_delta events of the block, no content_block_stop", async (size) => {
    const ev = (event: string, data: object) => ({ event, data: JSON.stringify({ type: event, ...data }) });
    const { out, err } = await cut("anthropic", [
      ev("message_start", { message: { id: "msg_1", content: [] } }),
      ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
      ...pieces(size).map((p) => ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: p } })),
      ev("content_block_stop", { index: 0 }),
      ev("message_stop", {}),
    ]);
    expect(err?.code).toBe("GUARDRAIL_BLOCKED");
    const deltas = out.filter((e) => e.event === "content_block_delta").map((e) => JSON.parse(e.data));
    expect(deltas.map((d) => d.delta.text).join("")).toBe(sentIn(size));
    expect(deltas.every((d) => d.index === 0 && d.delta.type === "text_delta")).toBe(true);
    expect(out.map((e) => e.event)).not.toContain("content_block_stop");
  });

  it.each([3, ANSWER.length])("responses, in pieces of %d: output_text deltas numbered on from the last one sent", async (size) => {
    let seq = 0;
    const ev = (type: string, data: object) => ({ event: type, data: JSON.stringify({ type, sequence_number: seq++, ...data }) });
    const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
    const { out, err } = await cut("responses", [
      ev("response.created", { response: { id: "r1", output: [] } }),
      ...pieces(size).map((p) => ev("response.output_text.delta", { ...at, delta: p })),
      ev("response.output_text.done", { ...at, text: ANSWER }),
    ]);
    expect(err?.code).toBe("GUARDRAIL_BLOCKED");
    const d = json(out);
    expect(d.filter((x: any) => x.type === "response.output_text.delta").map((x: any) => x.delta).join("")).toBe(sentIn(size));
    expect(d.at(-1)).toMatchObject({ type: "response.output_text.delta", ...at });
    expect(d.map((x: any) => x.sequence_number)).toEqual(d.map((_: unknown, i: number) => i));
  });

  it.each([3, ANSWER.length])("gemini, in pieces of %d: candidate text parts, the last one without a finishReason", async (size) => {
    const chunk = (text: string, finish?: string) => ({ data: JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0, ...(finish ? { finishReason: finish } : {}) }], modelVersion: "g" }) });
    const p = pieces(size);
    // The last piece comes with the finishReason, as Gemini sends it.
    const { out, err } = await cut("gemini", [...p.slice(0, -1).map((t) => chunk(t)), chunk(p.at(-1)!, "STOP")]);
    expect(err?.code).toBe("GUARDRAIL_BLOCKED");
    const d = json(out);
    expect(d.map((c: any) => c.candidates[0].content.parts.map((x: any) => x.text).join("")).join("")).toBe(sentIn(size));
    expect(d.every((c: any) => c.candidates[0].finishReason === undefined)).toBe(true);
  });

  it("chat: a key completed by the finish chunk: the text that had cleared the window before it goes out", async () => {
    const chunk = (delta: object, finish: string | null = null) => ({ data: JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }) });
    const { out, err } = await cut("openai", [chunk({ content: CLEAN }), chunk({ content: "ghp_abcdefghijklmnopqrstuvwxyz01234" }), chunk({ content: "56789" }, "stop"), { data: "[DONE]" }]);
    expect(err?.code).toBe("GUARDRAIL_BLOCKED");
    expect(json(out).map((c: any) => c.choices[0].delta.content ?? "").join("")).toBe(CLEAN.slice(0, CLEAN.length + 40 - 64));
  });
});

describe("url_citation annotations in a stream the guardrails change", () => {
  // The upstream's text: the placeholder it was sent, then the cited sentence.
  const UPSTREAM = ["Mail [EMAIL_", "1]. Paris is", " the capital."];
  const cited = { start: UPSTREAM.join("").indexOf("Paris"), end: UPSTREAM.join("").length };
  const CLIENT = "Mail alice@example.com. Paris is the capital.";

  it("chat: delta.annotations waits for the content it cites and is moved to it", async () => {
    const chunk = (delta: object, finish: string | null = null) => ({ data: JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }) });
    const annotation = { type: "url_citation", url_citation: { start_index: cited.start, end_index: cited.end, url: "https://paris.example/", title: "P" } };
    const out = json(await through("openai", [
      ...UPSTREAM.map((content) => chunk({ content })),
      chunk({ annotations: [annotation] }),
      chunk({}, "stop"),
      { data: "[DONE]" },
    ]));
    let sent = "";
    let at = -1;
    let annotations: any;
    for (const c of out.slice(0, -1) as any[]) {
      sent += c.choices[0].delta.content ?? "";
      if (c.choices[0].delta.annotations) (annotations = c.choices[0].delta.annotations), (at = sent.length);
    }
    expect(sent).toBe(CLIENT);
    const u = annotations[0].url_citation;
    expect(sent.slice(u.start_index, u.end_index)).toBe("Paris is the capital.");
    expect(at).toBeGreaterThanOrEqual(u.end_index);
  });

  it("responses: annotation.added waits for the text it cites, is moved to it, and the numbers stay consecutive", async () => {
    let seq = 0;
    const ev = (type: string, payload: object) => ({ event: type, data: JSON.stringify({ type, sequence_number: seq++, ...payload }) });
    const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
    const annotation = { type: "url_citation", start_index: cited.start, end_index: cited.end, url: "https://paris.example/", title: "P" };
    const whole = UPSTREAM.join("");
    const out = json(await through("responses", [
      ...UPSTREAM.map((delta) => ev("response.output_text.delta", { ...at, delta })),
      ev("response.output_text.annotation.added", { ...at, annotation_index: 0, annotation }),
      ev("response.output_text.done", { ...at, text: whole }),
      ev("response.content_part.done", { ...at, part: { type: "output_text", text: whole, annotations: [annotation] } }),
      ev("response.completed", { response: { output: [{ type: "message", id: "msg_1", content: [{ type: "output_text", text: whole, annotations: [annotation] }] }] } }),
    ])) as any[];
    expect(out.map((e) => e.sequence_number)).toEqual(out.map((_, i) => i));
    let sent = "";
    let added: any;
    let sentBefore = -1;
    for (const e of out) {
      if (e.type === "response.output_text.delta") sent += e.delta;
      if (e.type === "response.output_text.annotation.added") (added = e.annotation), (sentBefore = sent.length);
    }
    expect(sent).toBe(CLIENT);
    const span = (a: any) => sent.slice(a.start_index, a.end_index);
    expect(span(added)).toBe("Paris is the capital.");
    expect(sentBefore).toBeGreaterThanOrEqual(added.end_index);
    expect(span(out.find((e) => e.type === "response.content_part.done").part.annotations[0])).toBe("Paris is the capital.");
    expect(span(out.at(-1).response.output[0].content[0].annotations[0])).toBe("Paris is the capital.");
  });
});

describe("a chat stream's text never goes out after its choice's finish or after the usage chunk", () => {
  const chunk = (choices: object[], usage: object | null = null) => ({ data: JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices, usage }) });
  const usage = { prompt_tokens: 5, completion_tokens: 30, total_tokens: 35 };
  const SECRET = "AKIAIOSFODNN7EXAMPLE";
  /** Through an output rule that masks keys, so the latest text waits in the rules' window. */
  async function masked(events: SseEvent[]) {
    const run = runFor({ rules: [{ name: "sec", detect: ["secret" as const], on: ["output" as const], action: "redact" as const }] }, "openai");
    const out: SseEvent[] = [];
    for await (const ev of guardStream(run.ctx, run, (async function* () { yield* events; })())) out.push(ev);
    return json(out);
  }

  it("text a choice gets after its finish_reason is dropped: the finish, the usage chunk, [DONE]", async () => {
    const out = await masked([
      chunk([{ index: 0, delta: { content: "Paris is the capital." }, finish_reason: null }]),
      chunk([{ index: 0, delta: {}, finish_reason: "stop" }]),
      chunk([{ index: 0, delta: { content: ` TRAILING TEXT ${SECRET}` }, finish_reason: null }]),
      chunk([], usage),
      { data: "[DONE]" },
    ]);
    const choices = out.slice(0, -1).flatMap((c: any) => c.choices);
    expect(choices.map((c: any) => c.delta.content ?? "").join("")).toBe("Paris is the capital.");
    expect(out.findIndex((c: any) => c.choices?.[0]?.finish_reason === "stop")).toBe(out.findLastIndex((c: any) => c.choices?.length));
    expect(out.at(-2)).toMatchObject({ choices: [], usage });
    expect(out.at(-1)).toBe("[DONE]");
  });

  it("text still held for a choice with no finish goes out before the usage chunk, not after it", async () => {
    const out = await masked([
      chunk([{ index: 0, delta: { content: `The key is ${SECRET}` }, finish_reason: null }]),
      chunk([], usage),
      { data: "[DONE]" },
    ]);
    expect(out.slice(0, -2).flatMap((c: any) => c.choices).map((c: any) => c.delta.content ?? "").join("")).toBe("The key is [REDACTED:SECRET]");
    expect(out.at(-2)).toMatchObject({ choices: [], usage });
    expect(out.at(-1)).toBe("[DONE]");
  });
});
