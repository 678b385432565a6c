import { describe, expect, it } from "vitest";
import { MessagesToChatStream } from "./stream.ts";
import { messagesToChatResponse } from "./response.ts";
import { foldChatChoices } from "../../../test/helpers/fold-chat-chunks.ts";

const ev = (type: string, payload: Record<string, unknown> = {}) => ({ event: type, data: JSON.stringify({ type, ...payload }) });

function run(events: { event: string; data: string }[], includeUsage = true) {
  const t = new MessagesToChatStream({ includeUsage, provider: "p", created: 1 });
  return events.flatMap((e) => t.push(e)).map((e) => (e.data === "[DONE]" ? "[DONE]" : JSON.parse(e.data)));
}

const start = ev("message_start", { message: { id: "msg_1", model: "claude", usage: { input_tokens: 12, cache_read_input_tokens: 3, cache_creation_input_tokens: 0, output_tokens: 1 } } });

describe("messages events -> chat chunks", () => {
  it("reference §3.10 example: text then two tools; OpenAI tool indexes count tools only", () => {
    const out = run([
      start, ev("ping"),
      ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
      ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Checking" } }),
      ev("content_block_stop", { index: 0 }),
      ev("content_block_start", { index: 1, content_block: { type: "tool_use", id: "A", name: "wx", input: {} } }),
      ev("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: "" } }),
      ev("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: "{\"c\":\"SF\"}" } }),
      ev("content_block_stop", { index: 1 }),
      ev("content_block_start", { index: 2, content_block: { type: "tool_use", id: "B", name: "tm", input: {} } }),
      ev("content_block_delta", { index: 2, delta: { type: "input_json_delta", partial_json: "{}" } }),
      ev("content_block_stop", { index: 2 }),
      ev("message_delta", { delta: { stop_reason: "tool_use" }, usage: { output_tokens: 48 } }),
      ev("message_stop"),
    ]);
    const deltas = out.filter((c: any) => c !== "[DONE]" && c.choices.length).map((c: any) => c.choices[0].delta);
    expect(deltas).toEqual([
      { role: "assistant", content: "" },
      { content: "Checking" },
      { tool_calls: [{ index: 0, id: "A", type: "function", function: { name: "wx", arguments: "" } }] },
      { tool_calls: [{ index: 0, function: { arguments: "{\"c\":\"SF\"}" } }] },
      { tool_calls: [{ index: 1, id: "B", type: "function", function: { name: "tm", arguments: "" } }] },
      { tool_calls: [{ index: 1, function: { arguments: "{}" } }] },
      {},
    ]);
    expect(out.at(-3).choices[0].finish_reason).toBe("tool_calls");
    expect(out.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 15, completion_tokens: 48, total_tokens: 63, prompt_tokens_details: { cached_tokens: 3 } } });
    expect(out.at(-1)).toBe("[DONE]");
    for (const c of out.slice(0, -2)) expect(c).toMatchObject({ id: "msg_1", object: "chat.completion.chunk", created: 1, usage: null });
  });

  it("a tool called without arguments (only an empty input_json_delta, or none) gets arguments \"{}\" when its block closes", () => {
    const out = run([
      start,
      ev("content_block_start", { index: 0, content_block: { type: "tool_use", id: "A", name: "now", input: {} } }),
      ev("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: "" } }),
      ev("content_block_stop", { index: 0 }),
      ev("content_block_start", { index: 1, content_block: { type: "tool_use", id: "B", name: "today", input: {} } }),
      ev("content_block_stop", { index: 1 }),
      ev("content_block_start", { index: 2, content_block: { type: "tool_use", id: "C", name: "wx", input: {} } }),
      ev("content_block_delta", { index: 2, delta: { type: "input_json_delta", partial_json: "{\"c\":1}" } }),
      ev("content_block_stop", { index: 2 }),
      ev("message_delta", { delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } }),
      ev("message_stop"),
    ], false);
    const deltas = out.filter((c: any) => c !== "[DONE]").map((c: any) => c.choices[0]);
    expect(deltas.map((c: any) => c.delta)).toEqual([
      { role: "assistant", content: "" },
      { tool_calls: [{ index: 0, id: "A", type: "function", function: { name: "now", arguments: "" } }] },
      { tool_calls: [{ index: 0, function: { arguments: "{}" } }] },
      { tool_calls: [{ index: 1, id: "B", type: "function", function: { name: "today", arguments: "" } }] },
      { tool_calls: [{ index: 1, function: { arguments: "{}" } }] },
      { tool_calls: [{ index: 2, id: "C", type: "function", function: { name: "wx", arguments: "" } }] },
      { tool_calls: [{ index: 2, function: { arguments: "{\"c\":1}" } }] },
      {},
    ]);
    expect(deltas.at(-1).finish_reason).toBe("tool_calls");
  });

  it("JSON mode with an empty input answers \"{}\" as the non-streaming path does", () => {
    const t = new MessagesToChatStream({ includeUsage: false, provider: "p", jsonTool: "json_output" });
    const out = [
      start,
      ev("content_block_start", { index: 0, content_block: { type: "tool_use", id: "t", name: "json_output", input: {} } }),
      ev("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: "" } }),
      ev("content_block_stop", { index: 0 }),
      ev("message_delta", { delta: { stop_reason: "tool_use" }, usage: { output_tokens: 5 } }),
      ev("message_stop"),
    ].flatMap((e) => t.push(e)).filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data).choices[0]);
    expect(out.map((c) => c.delta.content ?? "").join("")).toBe("{}");
  });

  it("a refusal streams its explanation as delta.refusal before the content_filter finish (stop_details in the delta or beside it)", () => {
    const details = { type: "refusal", category: "cyber", explanation: "Refused." };
    for (const md of [
      { delta: { stop_reason: "refusal", stop_sequence: null, stop_details: details }, usage: { output_tokens: 3 } },
      { delta: { stop_reason: "refusal", stop_sequence: null }, stop_details: details, usage: { output_tokens: 3 } },
    ]) {
      const out = run([start, ev("ping"), ev("message_delta", md), ev("message_stop")], false);
      expect(out.filter((c: any) => c !== "[DONE]").map((c: any) => [c.choices[0].delta, c.choices[0].finish_reason])).toEqual([
        [{ role: "assistant", content: "" }, null],
        [{ refusal: "Refused." }, null],
        [{}, "content_filter"],
      ]);
    }
    const bare = run([start, ev("message_delta", { delta: { stop_reason: "refusal", stop_details: null }, usage: { output_tokens: 1 } }), ev("message_stop")], false);
    expect(bare.filter((c: any) => c !== "[DONE]").map((c: any) => c.choices[0].delta)).toEqual([{ role: "assistant", content: "" }, {}]);
  });

  it("without include_usage no usage chunk and no usage key", () => {
    const out = run([start, ev("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }), ev("message_stop")], false);
    expect(out.length).toBe(3);
    expect("usage" in out[0]).toBe(false);
    expect(out[1].choices[0].finish_reason).toBe("stop");
  });

  it("thinking streams live as reasoning_content; the signed block goes out whole when it closes", () => {
    const out = run([
      start,
      ev("content_block_start", { index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }),
      ev("content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking: "Let me" } }),
      ev("content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking: " see" } }),
      ev("content_block_delta", { index: 0, delta: { type: "signature_delta", signature: "Sig" } }),
      ev("content_block_stop", { index: 0 }),
      ev("content_block_start", { index: 1, content_block: { type: "redacted_thinking", data: "Enc" } }),
      ev("content_block_stop", { index: 1 }),
      ev("message_stop"),
    ]);
    const deltas = out.filter((c: any) => c !== "[DONE]" && c.choices.length).map((c: any) => c.choices[0].delta);
    expect(deltas.slice(1, -1)).toEqual([
      { reasoning_content: "Let me" },
      { reasoning_content: " see" },
      {
        reasoning_details: [{ type: "reasoning.text", text: "Let me see", signature: "Sig", format: "anthropic-claude-v1", index: 0 }],
        thinking_blocks: [{ type: "thinking", thinking: "Let me see", signature: "Sig" }],
      },
      {
        reasoning_details: [{ type: "reasoning.encrypted", data: "Enc", format: "anthropic-claude-v1", index: 1 }],
        thinking_blocks: [{ type: "redacted_thinking", data: "Enc" }],
      },
    ]);
  });

  it("an error event throws a retry-aware gateway error; a stream without message_stop is truncated", () => {
    const t = new MessagesToChatStream({ includeUsage: false, provider: "p" });
    t.push(start);
    expect(() => t.push(ev("error", { error: { type: "overloaded_error", message: "Overloaded" } }))).toThrow(/Overloaded/);
    const cut = new MessagesToChatStream({ includeUsage: false, provider: "p" });
    cut.push(start);
    expect(() => cut.end()).toThrow(/message_stop/);
  });

  it("JSON mode: the forced tool's fragments stream as content and the finish reason is stop", () => {
    const t = new MessagesToChatStream({ includeUsage: false, provider: "p", jsonTool: "json_output" });
    const out = [
      start,
      ev("content_block_start", { index: 0, content_block: { type: "tool_use", id: "t", name: "json_output", input: {} } }),
      ev("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: "{\"a\":" } }),
      ev("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: "1}" } }),
      ev("content_block_stop", { index: 0 }),
      ev("message_delta", { delta: { stop_reason: "tool_use" }, usage: { output_tokens: 5 } }),
      ev("message_stop"),
    ].flatMap((e) => t.push(e)).filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data).choices[0]);
    expect(out.map((c) => c.delta.content ?? "").join("")).toBe("{\"a\":1}");
    expect(out.some((c) => c.delta.tool_calls)).toBe(false);
    expect(out.at(-1).finish_reason).toBe("stop");
  });
});

describe("JSON beside tools: a stream says what the JSON answer says", () => {
  /** An Anthropic message as the events that stream it (tool inputs in small input_json_delta pieces). */
  const eventsOf = (msg: any) => [
    ev("message_start", { message: { id: msg.id, model: msg.model, usage: { ...msg.usage, output_tokens: 1 } } }),
    ...msg.content.flatMap((b: any, index: number) => {
      if (b.type === "text") return [ev("content_block_start", { index, content_block: { type: "text", text: "" } }), ev("content_block_delta", { index, delta: { type: "text_delta", text: b.text } }), ev("content_block_stop", { index })];
      const json = JSON.stringify(b.input);
      const pieces = Array.from({ length: Math.ceil(json.length / 4) }, (_, k) => json.slice(k * 4, k * 4 + 4));
      return [
        ev("content_block_start", { index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } }),
        ...pieces.map((p) => ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: p } })),
        ev("content_block_stop", { index }),
      ];
    }),
    ev("message_delta", { delta: { stop_reason: msg.stop_reason }, usage: { output_tokens: msg.usage.output_tokens } }),
    ev("message_stop"),
  ];
  /** The chat chunks folded as a client does: content joined, tool calls by index, the finish reason. */
  const folded = (msg: any) => {
    const t = new MessagesToChatStream({ includeUsage: false, provider: "p", jsonTool: "json_output" });
    return foldChatChoices(eventsOf(msg).flatMap((e) => t.push(e)).filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data).choices[0]));
  };
  const answer = (content: unknown[]) => ({ id: "msg_1", model: "claude-x", content, stop_reason: "tool_use", usage: { input_tokens: 10, output_tokens: 7 } });
  const call = { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } };
  const json = (input: unknown) => ({ type: "tool_use", id: "toolu_j", name: "json_output", input });

  it.each([
    ["a client tool call alone", [call], { content: null, calls: ["get_weather"], finish: "tool_calls" }],
    ["json_output alone", [json({ summary: "sunny" })], { content: "{\"summary\":\"sunny\"}", calls: [], finish: "stop" }],
    ["json_output after a client tool call", [call, json({ summary: "sunny" })], { content: "{\"summary\":\"sunny\"}", calls: ["get_weather"], finish: "tool_calls" }],
    ["json_output before a client tool call (index counted without it)", [json({ a: 1 }), call], { content: "{\"a\":1}", calls: ["get_weather"], finish: "tool_calls" }],
    ["json_output called twice: the first is the answer", [json({ a: 1 }), json({ a: 2 })], { content: "{\"a\":1}", calls: [], finish: "stop" }],
  ])("%s", (_, content, want) => {
    const msg = answer(content);
    const chat: any = messagesToChatResponse(msg, 1, "json_output");
    const m = chat.choices[0].message;
    expect({ content: m.content, calls: (m.tool_calls ?? []).map((c: any) => c.function.name), finish: chat.choices[0].finish_reason }).toEqual(want);
    expect(folded(msg)).toEqual({ content: m.content, tool_calls: m.tool_calls, finish_reason: chat.choices[0].finish_reason });
  });
});

describe("a Claude web search stream as chat chunks", () => {
  const cite = (url: string, title: string) => ({ type: "web_search_result_location", url, title, cited_text: "Sunny", encrypted_index: "Eo8B" });
  const text = (index: number, t: string) => ev("content_block_delta", { index, delta: { type: "text_delta", text: t } });
  const searched = [
    start,
    ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }), text(0, "Let me look. "), ev("content_block_stop", { index: 0 }),
    ev("content_block_start", { index: 1, content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} } }),
    ev("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: "{\"query\":\"weather paris\"}" } }),
    ev("content_block_stop", { index: 1 }),
    ev("content_block_start", { index: 2, content_block: { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] } }),
    ev("content_block_stop", { index: 2 }),
    ev("content_block_start", { index: 3, content_block: { type: "text", text: "", citations: [] } }),
    ev("content_block_delta", { index: 3, delta: { type: "citations_delta", citation: cite("https://meteo.fr/paris", "Paris — Météo") } }),
    text(3, "It is “sunny”"), text(3, " in Paris"), ev("content_block_stop", { index: 3 }),
    ev("content_block_start", { index: 4, content_block: { type: "text", text: "" } }), text(4, " today."), ev("content_block_stop", { index: 4 }),
    ev("content_block_start", { index: 5, content_block: { type: "text", text: "" } }),
    ev("content_block_delta", { index: 5, delta: { type: "citations_delta", citation: cite("https://wx.example/p", "WX") } }),
    text(5, " Low 12°C."), ev("content_block_stop", { index: 5 }),
    ev("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 30 } }),
    ev("message_stop"),
  ];

  it("the sources arrive as url_citation annotations in one delta before the finish, at the same offsets as the JSON answer", () => {
    const chunks = run(searched).filter((c: any) => c !== "[DONE]" && c.choices.length);
    const withAnnotations = chunks.filter((c: any) => c.choices[0].delta.annotations);
    expect(withAnnotations).toHaveLength(1);
    const annotations = withAnnotations[0].choices[0].delta.annotations;
    expect(annotations).toEqual([
      { type: "url_citation", url_citation: { start_index: 13, end_index: 35, url: "https://meteo.fr/paris", title: "Paris — Météo" } },
      { type: "url_citation", url_citation: { start_index: 42, end_index: 52, url: "https://wx.example/p", title: "WX" } },
    ]);
    const content = chunks.map((c: any) => c.choices[0].delta.content ?? "").join("");
    expect(content.slice(13, 35)).toBe("It is “sunny” in Paris");
    expect(content.slice(42, 52)).toBe(" Low 12°C.");
    expect(chunks.indexOf(withAnnotations[0])).toBe(chunks.length - 2);
    expect(chunks.at(-1).choices[0].finish_reason).toBe("stop");
  });

  it("the annotations of text before a tool call go out once, with all the others, just before the finish", () => {
    const out = run([
      start,
      ev("content_block_start", { index: 0, content_block: { type: "text", text: "", citations: [cite("https://a.example/", "A")] } }), text(0, "Cited."), ev("content_block_stop", { index: 0 }),
      ev("content_block_start", { index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "wx", input: {} } }),
      ev("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: "{}" } }), ev("content_block_stop", { index: 1 }),
      ev("message_delta", { delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } }), ev("message_stop"),
    ]);
    const deltas = out.filter((c: any) => c !== "[DONE]" && c.choices.length).map((c: any) => c.choices[0].delta);
    expect(deltas.slice(1)).toEqual([
      { content: "Cited." },
      { tool_calls: [{ index: 0, id: "toolu_1", type: "function", function: { name: "wx", arguments: "" } }] },
      { tool_calls: [{ index: 0, function: { arguments: "{}" } }] },
      { annotations: [{ type: "url_citation", url_citation: { start_index: 0, end_index: 6, url: "https://a.example/", title: "A" } }] },
      {},
    ]);
  });

  it("with interleaved thinking, every block's sources come in one delta: a client keeping the last value and one joining them both get all, once", () => {
    const thinking = (index: number, t: string, sig: string) => [
      ev("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } }),
      ev("content_block_delta", { index, delta: { type: "thinking_delta", thinking: t } }),
      ev("content_block_delta", { index, delta: { type: "signature_delta", signature: sig } }),
      ev("content_block_stop", { index }),
    ];
    const out = run([
      start,
      ...thinking(0, "hmm", "sig1"),
      ev("content_block_start", { index: 1, content_block: { type: "text", text: "", citations: [] } }), text(1, "Paris is the capital."),
      ev("content_block_delta", { index: 1, delta: { type: "citations_delta", citation: cite("https://a.example/", "A") } }), ev("content_block_stop", { index: 1 }),
      ...thinking(2, "more", "sig2"),
      ev("content_block_start", { index: 3, content_block: { type: "text", text: "", citations: [] } }), text(3, " Lyon is second."),
      ev("content_block_delta", { index: 3, delta: { type: "citations_delta", citation: cite("https://b.example/", "B") } }), ev("content_block_stop", { index: 3 }),
      ev("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9 } }), ev("message_stop"),
    ]);
    const deltas = out.filter((c: any) => c !== "[DONE]" && c.choices.length).map((c: any) => c.choices[0].delta);
    const both = [
      { type: "url_citation", url_citation: { start_index: 0, end_index: 21, url: "https://a.example/", title: "A" } },
      { type: "url_citation", url_citation: { start_index: 21, end_index: 37, url: "https://b.example/", title: "B" } },
    ];
    // The openai SDK's stream helper keeps the last value of a delta field; other clients append every piece.
    const lastValue = deltas.reduce((kept: any, d: any) => d.annotations ?? kept, undefined);
    const joined = deltas.flatMap((d: any) => d.annotations ?? []);
    expect(lastValue).toEqual(both);
    expect(joined).toEqual(both);
  });

  it("a stream citing nothing sends no annotations", () => {
    const out = run([start, ev("content_block_start", { index: 0, content_block: { type: "text", text: "Hi", citations: [] } }), ev("content_block_stop", { index: 0 }), ev("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 1 } }), ev("message_stop")]);
    expect(out.some((c: any) => c !== "[DONE]" && c.choices[0]?.delta?.annotations)).toBe(false);
  });
});

describe("the tier that served a Claude stream, on every chunk as OpenAI sends it", () => {
  const tiered = (service_tier: unknown) => run([
    ev("message_start", { message: { id: "msg_1", model: "claude", usage: { input_tokens: 12, output_tokens: 1, service_tier } } }),
    ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Hi" } }),
    ev("content_block_stop", { index: 0 }),
    ev("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }),
    ev("message_stop"),
  ]).filter((c: any) => c !== "[DONE]");

  it("message_start's standard is default on each chunk, the usage chunk included; priority is priority", () => {
    const out = tiered("standard");
    expect(out.length).toBe(4);
    expect(out.map((c: any) => c.service_tier)).toEqual(["default", "default", "default", "default"]);
    expect(tiered("priority").map((c: any) => c.service_tier)).toEqual(["priority", "priority", "priority", "priority"]);
  });

  it("a stream naming no tier has no service_tier on its chunks", () => {
    expect(tiered(undefined).some((c: any) => "service_tier" in c)).toBe(false);
  });
});
