// Per-event cost of stream transcoding (tinybench, in-process):
//   Anthropic -> chat   (a chat client on an Anthropic model: MessagesToChatStream)
//   chat -> messages    (a messages client on an OpenAI-protocol model: ChatToMessagesStream)
// each against a baseline that only parses and re-serialises every event (the least any transcoder must do).
// Run alone: `npx tsx bench/transcode.bench.ts`; a bench runner can import `transcodeBench()` and `report()`.
// Outputs are asserted once before timing so the bench never times broken code.
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { Bench } from "tinybench";
import type { SseEvent } from "../core/sse/parse.ts";
import { MessagesToChatStream } from "../providers/translate/chat-to-messages/stream.ts";
import { ChatToMessagesStream } from "../providers/translate/messages-to-chat/stream.ts";

const TEXT_EVENTS = 200;
const TOOL_FRAGMENTS = 40;

/** A realistic Anthropic stream: text, then a tool call in small input_json_delta fragments. */
export function anthropicStream(): SseEvent[] {
  const ev = (type: string, p: Record<string, unknown> = {}): SseEvent => ({ event: type, data: JSON.stringify({ type, ...p }) });
  const out = [
    ev("message_start", { message: { id: "msg_bench", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 120, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } } }),
    ev("ping"),
    ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
  ];
  for (let i = 0; i < TEXT_EVENTS; i++) out.push(ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: ` word${i}` } }));
  out.push(ev("content_block_stop", { index: 0 }));
  out.push(ev("content_block_start", { index: 1, content_block: { type: "tool_use", id: "toolu_bench", name: "get_weather", input: {} } }));
  for (let i = 0; i < TOOL_FRAGMENTS; i++) out.push(ev("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: i === 0 ? "{\"city\":\"" : "Paris" } }));
  out.push(ev("content_block_stop", { index: 1 }));
  out.push(ev("message_delta", { delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 260 } }));
  out.push(ev("message_stop"));
  return out;
}

/** A realistic OpenAI stream of the same content. */
export function chatStream(): SseEvent[] {
  const base = { id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1770000000, model: "gpt-4o-mini", system_fingerprint: "fp_x" };
  const c = (delta: Record<string, unknown>, finish: string | null = null): SseEvent => ({ data: JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null }) });
  const out = [c({ role: "assistant", content: "", refusal: null })];
  for (let i = 0; i < TEXT_EVENTS; i++) out.push(c({ content: ` word${i}` }));
  out.push(c({ tool_calls: [{ index: 0, id: "call_bench", type: "function", function: { name: "get_weather", arguments: "" } }] }));
  for (let i = 0; i < TOOL_FRAGMENTS; i++) out.push(c({ tool_calls: [{ index: 0, function: { arguments: i === 0 ? "{\"city\":\"" : "Paris" } }] }));
  out.push(c({}, "tool_calls"));
  out.push({ data: JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 120, completion_tokens: 260, total_tokens: 380 } }) });
  out.push({ data: "[DONE]" });
  return out;
}

function anthropicToChat(events: SseEvent[]): number {
  const t = new MessagesToChatStream({ includeUsage: true, provider: "bench", created: 1 });
  let n = 0;
  for (const e of events) n += t.push(e).length;
  return n;
}

function chatToMessages(events: SseEvent[]): number {
  const t = new ChatToMessagesStream({ provider: "bench" });
  let n = 0;
  for (const e of events) n += t.push(e).length;
  return n;
}

/** Baseline: parse and re-serialise every event, nothing else. */
function reserialise(events: SseEvent[]): number {
  let n = 0;
  for (const e of events) if (e.data !== "[DONE]") n += JSON.stringify(JSON.parse(e.data)).length;
  return n;
}

export function transcodeBench(opts: { time?: number } = {}): { bench: Bench; perEvent: Record<string, number> } {
  const a = anthropicStream();
  const c = chatStream();
  // Assert once: the transcoders produce what the clients need before we time them.
  const chat = (() => { const t = new MessagesToChatStream({ includeUsage: true, provider: "b", created: 1 }); return a.flatMap((e) => t.push(e)); })();
  assert.equal(chat.at(-1)!.data, "[DONE]");
  assert.equal(JSON.parse(chat.at(-2)!.data).usage.completion_tokens, 260);
  const msgs = (() => { const t = new ChatToMessagesStream({ provider: "b" }); return c.flatMap((e) => t.push(e)); })();
  assert.equal(msgs[0]!.event, "message_start");
  assert.equal(msgs.at(-1)!.event, "message_stop");

  const bench = new Bench({ time: opts.time ?? 1000 });
  const perEvent: Record<string, number> = {
    "Anthropic -> chat (transcode)": a.length,
    "Anthropic events (parse + stringify baseline)": a.length,
    "chat -> messages (transcode)": c.length,
    "chat chunks (parse + stringify baseline)": c.length,
  };
  bench
    .add("Anthropic -> chat (transcode)", () => { anthropicToChat(a); })
    .add("Anthropic events (parse + stringify baseline)", () => { reserialise(a); })
    .add("chat -> messages (transcode)", () => { chatToMessages(c); })
    .add("chat chunks (parse + stringify baseline)", () => { reserialise(c); });
  return { bench, perEvent };
}

/** ns per upstream event for each task (mean stream time / events in the stream). */
export function report(bench: Bench, perEvent: Record<string, number>): { task: string; nsPerEvent: number; events: number }[] {
  return bench.tasks.map((t) => {
    const r = t.result as { latency?: { mean: number } };
    const ms = r.latency?.mean ?? NaN;
    return { task: t.name, nsPerEvent: Math.round((ms * 1e6) / perEvent[t.name]!), events: perEvent[t.name]! };
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { bench, perEvent } = transcodeBench();
  await bench.run();
  console.table(report(bench, perEvent));
}
