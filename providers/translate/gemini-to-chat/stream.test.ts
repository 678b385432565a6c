import { describe, expect, it } from "vitest";
import { decodeReasoning } from "../responses-to-chat/reasoning.ts";
import type { SseEvent } from "../../../core/sse/parse.ts";
import { ChatToGeminiStream } from "./stream.ts";
import { chatToGeminiResponse, usageMetadataOf } from "./response.ts";

const ctx = { flavor: "messages" as const, provider: "claude", model: "anthropic/claude", thoughts: true };
const chunk = (delta: any, finish: string | null = null, extra: any = {}) => ({ data: JSON.stringify({ id: "chatcmpl-r1", choices: [{ index: 0, delta, finish_reason: finish }], ...extra }) });
const detail = { type: "reasoning.text", text: "Thinking.", signature: "sig", format: "anthropic-claude-v1", index: 0 };

describe("chat answer -> Gemini", () => {
  it("JSON: thoughts, text, whole calls; the signed reasoning on the first non-thought part; usage apart", () => {
    const g: any = chatToGeminiResponse({
      id: "chatcmpl-x", choices: [{ index: 0, finish_reason: "tool_calls", message: { role: "assistant", content: "Let me check.", reasoning_content: "Thinking.", reasoning_details: [detail], tool_calls: [{ id: "toolu_1", type: "function", function: { name: "f", arguments: '{"a":1}' } }] } }],
      usage: { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17, completion_tokens_details: { reasoning_tokens: 3 }, prompt_tokens_details: { cached_tokens: 4 } },
    }, ctx);
    const parts = g.candidates[0].content.parts;
    expect(parts.map((p: any) => Object.keys(p).sort().join("+"))).toEqual(["text+thought", "text+thoughtSignature", "functionCall"]);
    expect(decodeReasoning(parts[1].thoughtSignature)).toEqual({ p: "messages", d: [detail] });
    expect(parts[2]).toEqual({ functionCall: { id: "toolu_1", name: "f", args: { a: 1 } } });
    expect(g).toMatchObject({ modelVersion: "anthropic/claude", responseId: "x", candidates: [{ finishReason: "STOP", index: 0 }] });
    expect(g.usageMetadata).toEqual({ promptTokenCount: 10, candidatesTokenCount: 4, thoughtsTokenCount: 3, cachedContentTokenCount: 4, totalTokenCount: 17 });
    // Without includeThoughts there is no thought part, and the reasoning still rides.
    const quiet: any = chatToGeminiResponse({ choices: [{ finish_reason: "length", message: { content: "", reasoning_content: "x", reasoning_details: [detail] } }] }, { ...ctx, thoughts: false });
    expect(quiet.candidates[0]).toMatchObject({ finishReason: "MAX_TOKENS", content: { role: "model", parts: [{ text: "", thoughtSignature: expect.stringMatching(/^mgr1\./) }] } });
    expect(usageMetadataOf(undefined)).toEqual({ promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 });
  });

  it("stream: deltas as they come, fragments of a call joined and sent whole with the finish reason and usage last", () => {
    const t = new ChatToGeminiStream(ctx);
    const out = [
      chunk({ role: "assistant", content: "" }),
      chunk({ reasoning_content: "Think" }),
      chunk({ reasoning_details: [detail] }),
      chunk({ content: "Let me" }),
      chunk({ content: " check." }),
      chunk({ tool_calls: [{ index: 0, id: "toolu_1", type: "function", function: { name: "read_file", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"a.txt"}' } }] }),
      chunk({}, "tool_calls"),
      { data: JSON.stringify({ id: "chatcmpl-r1", choices: [], usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 } }) },
      { data: "[DONE]" },
    ].flatMap((e) => t.push(e)).concat(t.end()).map((e) => JSON.parse(e.data));
    const parts = out.map((e) => e.candidates[0].content.parts);
    expect(parts[0]).toEqual([{ text: "Think", thought: true }]);
    expect(parts[1]).toEqual([{ text: "Let me", thoughtSignature: expect.stringMatching(/^mgr1\./) }]);
    expect(parts[2]).toEqual([{ text: " check." }]);
    expect(parts[3]).toEqual([{ functionCall: { id: "toolu_1", name: "read_file", args: { path: "a.txt" } } }]);
    expect(out.at(-1)).toMatchObject({ candidates: [{ finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 6, totalTokenCount: 11 }, modelVersion: "anthropic/claude", responseId: "r1" });
    expect(out.slice(0, -1).every((e) => e.usageMetadata === undefined && e.candidates[0].finishReason === undefined)).toBe(true);
  });

  it("modelVersion is the model the upstream's answer names (dispatch names the gateway's), else the gateway id", () => {
    const dated = { model: "claude-sonnet-4-5-20250929" };
    expect(chatToGeminiResponse({ ...dated, choices: [{ finish_reason: "stop", message: { content: "Hi" } }] }, ctx)).toMatchObject({ modelVersion: dated.model });
    const t = new ChatToGeminiStream(ctx);
    // Azure's content-filter chunk names no model: the next chunk's is the upstream's.
    const out = [chunk({ role: "assistant", content: "" }, null, { model: "" }), chunk({ content: "Hi" }, null, dated), chunk({}, "stop", dated)].flatMap((e) => t.push(e)).concat(t.end());
    expect(out.map((e) => JSON.parse(e.data).modelVersion)).toEqual([dated.model, dated.model]);
  });

  it("stream: reasoning with no part after it rides on the calls; an unfinished stream is an error; a mid-stream error throws", () => {
    const t = new ChatToGeminiStream({ ...ctx, thoughts: false });
    t.push(chunk({ reasoning_content: "x", reasoning_details: [detail] }));
    expect(t.push(chunk({ tool_calls: [{ index: 0, id: "a", function: { name: "f", arguments: "{}" } }] }, "tool_calls"))).toEqual([]);
    const last = JSON.parse(t.end()[0]!.data);
    expect(last.candidates[0].content.parts).toEqual([{ functionCall: { id: "a", name: "f", args: {} }, thoughtSignature: expect.stringMatching(/^mgr1\./) }]);
    const cut = new ChatToGeminiStream(ctx);
    cut.push(chunk({ content: "par" }));
    expect(() => cut.end()).toThrow(/before a finish reason/);
    expect(() => new ChatToGeminiStream(ctx).push({ data: JSON.stringify({ error: { message: "boom" } }) })).toThrow(expect.objectContaining({ status: 502, code: "UPSTREAM_ERROR", retryable: true }));
    // An error about the request is the client's 400 (INVALID_ARGUMENT to a Gemini client), as the chat upstream's HTTP 400 is.
    const refused = { error: { message: "Invalid 'messages[0].content': string too long.", type: "invalid_request_error", code: "string_above_max_length", param: "messages[0].content" } };
    expect(() => new ChatToGeminiStream(ctx).push({ data: JSON.stringify(refused) })).toThrow(expect.objectContaining({ status: 400, code: "INVALID_REQUEST", retryable: false, details: expect.objectContaining({ field: "messages[0].content" }) }));
  });

  it("stream: every event carries parts, the last one (finish and usage after text) an empty text part", () => {
    const t = new ChatToGeminiStream({ ...ctx, thoughts: false });
    const out = [chunk({ role: "assistant", content: "" }), chunk({ content: "Hi" }), chunk({}, "stop"), { data: JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }) }]
      .flatMap((e) => t.push(e)).concat(t.end()).map((e) => JSON.parse(e.data));
    expect(out.map((e) => e.candidates[0].content.parts)).toEqual([[{ text: "Hi" }], [{ text: "" }]]);
    expect(out.at(-1)).toMatchObject({ candidates: [{ content: { role: "model" }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 3, totalTokenCount: 4 } });
  });

  it("a refusal (message.refusal, delta.refusal) is the refusal's text ending with SAFETY, JSON and stream alike", () => {
    const json = (finish_reason: string | null): any => (chatToGeminiResponse({ choices: [{ index: 0, finish_reason, message: { role: "assistant", content: null, refusal: "I can't help with that." } }] }, ctx) as any).candidates[0];
    expect(json("stop")).toEqual({ content: { role: "model", parts: [{ text: "I can't help with that." }] }, finishReason: "SAFETY", index: 0 });
    expect(json(null).finishReason).toBe("SAFETY");
    expect(json("length").finishReason).toBe("MAX_TOKENS");
    const t = new ChatToGeminiStream(ctx);
    const events = [chunk({ role: "assistant", content: "", refusal: null }), chunk({ refusal: "I can't " }), chunk({ refusal: "help with that." }), chunk({}, "stop")];
    const out = events.flatMap((e: SseEvent) => t.push(e)).concat(t.end()).map((e) => JSON.parse(e.data).candidates[0]);
    expect(out.flatMap((c) => c.content.parts ?? []).map((p: any) => p.text).join("")).toBe("I can't help with that.");
    expect(out.at(-1).finishReason).toBe("SAFETY");
  });

  it("a chat upstream's plain reasoning (DeepSeek's reasoning_content) rides in the blob with its field, JSON and stream", () => {
    const chatCtx = { flavor: "chat" as const, provider: "deepseek", model: "deepseek/r", thoughts: false };
    const call = { id: "call_1", type: "function", function: { name: "f", arguments: "{}" } };
    const json: any = chatToGeminiResponse({ choices: [{ finish_reason: "tool_calls", message: { content: null, reasoning_content: "I should call f.", tool_calls: [call] } }] }, chatCtx);
    expect(decodeReasoning(json.candidates[0].content.parts[0].thoughtSignature)).toEqual({ p: "chat", n: "deepseek", d: [], t: "reasoning_content", x: "I should call f." });
    const t = new ChatToGeminiStream(chatCtx);
    t.push(chunk({ reasoning_content: "I should " }));
    t.push(chunk({ reasoning_content: "call f." }));
    t.push(chunk({ tool_calls: [{ index: 0, ...call }] }, "tool_calls"));
    const last = JSON.parse(t.end()[0]!.data);
    expect(decodeReasoning(last.candidates[0].content.parts[0].thoughtSignature)).toEqual({ p: "chat", n: "deepseek", d: [], t: "reasoning_content", x: "I should call f." });
    // Anthropic's text is in its signed details already: no copy for a chained upstream.
    const signed: any = chatToGeminiResponse({ choices: [{ finish_reason: "stop", message: { content: "hi", reasoning_content: "Thinking.", reasoning_details: [detail] } }] }, { ...chatCtx, flavor: "messages" });
    expect(decodeReasoning(signed.candidates[0].content.parts[0].thoughtSignature)).toEqual({ p: "messages", d: [detail] });
  });
});
