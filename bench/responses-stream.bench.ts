// Per-event cost of a Responses client's stream (tinybench, in-process), on an ordinary short answer (200 words, then
// a tool call in 40 fragments), with the answer bound (providers/answer-bound.ts) counting it:
//   chat -> Responses   (a Responses client on a chat upstream: chatToResponsesStream, texts kept as pieces)
//   Responses relay     (a Responses client on an OpenAI Responses upstream: relayResponsesBody, bytes in; an answer
//                        this short is far from the bound, so its deltas are never scanned: responses-answer-size.ts)
// each against a baseline timed in the same run: parse + re-serialise every chunk for the translation, a bare SSE
// parse of the same bytes for the relay. `npx tsx bench/responses-stream.bench.ts [OTHER_CHECKOUT]`: given another
// checkout of the gateway (e.g. `git worktree add /tmp/before HEAD~1`), its same two tasks are timed in the same run
// too, and each task's ratio is against its twin there (below 1: this tree is faster). Outputs are asserted once
// before timing so the bench never times broken code.
import assert from "node:assert/strict";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Bench } from "tinybench";
import type { SseEvent } from "../core/sse/parse.ts";
import { SseParser } from "../core/sse/parse.ts";
import { chatStream } from "./transcode.bench.ts";

type Translate = (events: AsyncIterable<SseEvent>, echo: unknown, ctx: unknown) => AsyncIterable<SseEvent>;
type Relay = (body: AsyncIterable<Uint8Array>, call: unknown, provider: string, signal: AbortSignal) => AsyncIterable<SseEvent>;
interface Tree { label: string; translate: Translate; echoOf: (body: unknown) => unknown; relay: Relay }

async function load(root: string, label: string): Promise<Tree> {
  const at = (p: string) => import(pathToFileURL(resolve(root, p)).href);
  const stream = await at("providers/translate/responses-to-chat/stream.ts");
  const response = await at("providers/translate/responses-to-chat/response.ts");
  const relay = await at("providers/openai-compatible/responses-stream.ts");
  return { label, translate: stream.chatToResponsesStream, echoOf: response.echoOf, relay: relay.relayResponsesBody };
}

/** The same answer as an OpenAI Responses upstream streams it, as bytes in one read per event. */
export function responsesWire(): Uint8Array[] {
  const response = { id: "resp_bench", object: "response", created_at: 1770000000, status: "in_progress", model: "gpt-5", output: [], usage: null };
  let seq = 0;
  const ev = (type: string, p: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...p })}\n\n`;
  const out = [ev("response.created", { response }), ev("response.in_progress", { response })];
  const msg = { id: "msg_bench", type: "message", status: "in_progress", role: "assistant", content: [] };
  out.push(ev("response.output_item.added", { output_index: 0, item: msg }));
  out.push(ev("response.content_part.added", { item_id: "msg_bench", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }));
  let text = "";
  for (let i = 0; i < 200; i++) {
    text += ` word${i}`;
    out.push(ev("response.output_text.delta", { item_id: "msg_bench", output_index: 0, content_index: 0, delta: ` word${i}`, logprobs: [], obfuscation: "abc" }));
  }
  out.push(ev("response.output_text.done", { item_id: "msg_bench", output_index: 0, content_index: 0, text, logprobs: [] }));
  const done = { ...msg, status: "completed", content: [{ type: "output_text", text, annotations: [], logprobs: [] }] };
  out.push(ev("response.output_item.done", { output_index: 0, item: done }));
  const call = { id: "fc_bench", type: "function_call", status: "in_progress", call_id: "call_bench", name: "get_weather", arguments: "" };
  out.push(ev("response.output_item.added", { output_index: 1, item: call }));
  let args = "";
  for (let i = 0; i < 40; i++) {
    const d = i === 0 ? "{\"city\":\"" : "Paris";
    args += d;
    out.push(ev("response.function_call_arguments.delta", { item_id: "fc_bench", output_index: 1, delta: d }));
  }
  out.push(ev("response.function_call_arguments.done", { item_id: "fc_bench", output_index: 1, arguments: args }));
  out.push(ev("response.output_item.done", { output_index: 1, item: { ...call, status: "completed", arguments: args } }));
  const usage = { input_tokens: 120, input_tokens_details: { cached_tokens: 0 }, output_tokens: 260, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 380 };
  out.push(ev("response.completed", { response: { ...response, status: "completed", output: [done, { ...call, status: "completed", arguments: args }], usage } }));
  const enc = new TextEncoder();
  return out.map((s) => enc.encode(s));
}

const call = { reportUsage() {}, reportFirstToken() {}, reportFirstEvent() {} };
const signal = new AbortController().signal;

async function translated(tree: Tree, chunks: SseEvent[]): Promise<SseEvent[]> {
  async function* src() {
    for (const c of chunks) yield c;
  }
  const out: SseEvent[] = [];
  for await (const e of tree.translate(src(), tree.echoOf({ model: "m", input: "x" }), { flavor: "chat", provider: "bench", show: false })) out.push(e);
  return out;
}

async function relayed(tree: Tree, wire: Uint8Array[]): Promise<number> {
  async function* body() {
    for (const b of wire) yield b;
  }
  let n = 0;
  for await (const e of tree.relay(body(), call, "bench", signal)) n += e.data.length > 0 ? 1 : 0;
  return n;
}

/** Baseline of the translation: parse and re-serialise every chunk, nothing else. */
function reserialise(events: SseEvent[]): number {
  let n = 0;
  for (const e of events) if (e.data !== "[DONE]") n += JSON.stringify(JSON.parse(e.data)).length;
  return n;
}

/** Baseline of the relay: the SSE parse of the same bytes. */
function parseOnly(wire: Uint8Array[]): number {
  const p = new SseParser();
  let n = 0;
  for (const b of wire) n += p.push(b).length;
  return n;
}

export async function responsesStreamBench(other?: string, opts: { time?: number } = {}) {
  const chunks = chatStream();
  const wire = responsesWire();
  const trees = [await load(resolve(import.meta.dirname, ".."), "this tree")];
  if (other) trees.push(await load(other, "other"));
  for (const tree of trees) {
    // Assert once: both give the client what it needs before they are timed.
    const out = await translated(tree, chunks);
    assert.equal(out.at(-1)!.event, "response.completed");
    assert.equal(JSON.parse(out.at(-1)!.data).response.output[0].content[0].text, Array.from({ length: 200 }, (_, i) => ` word${i}`).join(""));
    assert.equal(await relayed(tree, wire), wire.length);
  }
  const bench = new Bench({ time: opts.time ?? Number(process.env.BENCH_TIME ?? 1000) });
  const perEvent: Record<string, number> = {};
  for (const tree of trees) {
    perEvent[`chat -> Responses (${tree.label})`] = chunks.length;
    perEvent[`Responses relay (${tree.label})`] = wire.length;
    bench.add(`chat -> Responses (${tree.label})`, async () => { await translated(tree, chunks); });
    bench.add(`Responses relay (${tree.label})`, async () => { await relayed(tree, wire); });
  }
  perEvent["chat chunks (parse + stringify baseline)"] = chunks.length;
  perEvent["Responses bytes (SSE parse baseline)"] = wire.length;
  bench.add("chat chunks (parse + stringify baseline)", () => { reserialise(chunks); });
  bench.add("Responses bytes (SSE parse baseline)", () => { parseOnly(wire); });
  return { bench, perEvent, paired: trees.length > 1 };
}

/** p50 ns per upstream event, and each task's p50 over its baseline (its twin in the other tree when there is one). */
export function report(bench: Bench, perEvent: Record<string, number>, paired: boolean) {
  const p50 = (name: string) => (bench.tasks.find((t) => t.name === name)?.result as { latency?: { p50?: number } } | undefined)?.latency?.p50 ?? NaN;
  const baseOf = (name: string) => {
    if (paired && name.endsWith("(this tree)")) return name.replace("(this tree)", "(other)");
    if (name.startsWith("chat -> Responses")) return "chat chunks (parse + stringify baseline)";
    if (name.startsWith("Responses relay")) return "Responses bytes (SSE parse baseline)";
    return name;
  };
  return bench.tasks.map((t) => ({
    task: t.name,
    "p50 ns/event": Math.round((p50(t.name) * 1e6) / perEvent[t.name]!),
    "p50 vs": baseOf(t.name),
    ratio: Number((p50(t.name) / p50(baseOf(t.name))).toFixed(3)),
  }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { bench, perEvent, paired } = await responsesStreamBench(process.argv[2]);
  await bench.run();
  console.table(report(bench, perEvent, paired));
}
