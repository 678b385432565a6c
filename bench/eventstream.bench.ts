// Bedrock's binary event stream next to SSE, per event (issue 15): the same 50-token answer as an OpenAI SSE stream
// (54 frames: role, 50 content chunks, finish, usage, [DONE]) and as a ConverseStream (54 frames: messageStart, 50
// contentBlockDelta, contentBlockStop, messageStop, metadata; Bedrock's random `p` padding included), decoded
//   1. frame by frame: core/sse SseParser vs providers/bedrock EventStreamDecoder (@smithy/eventstream-codec,
//      both CRC-32s checked, headers parsed, payload to text) — one read per frame, and 512-byte reads;
//   2. into chat chunks: SSE parse + JSON.parse of each chunk vs decode + ConverseToChatStream (the translation a
//      chat client's Bedrock stream goes through).
import { randomBytes } from "node:crypto";
import { fromUtf8 } from "@smithy/util-utf8";
import { SseParser } from "../core/sse/parse.ts";
import { EventStreamDecoder, eventStreamCodec, toFrame } from "../providers/bedrock/eventstream.ts";
import { ConverseToChatStream } from "../providers/translate/chat-to-converse/stream.ts";
import { render } from "./load/upstream.ts";
import { assertEqual, runGroup } from "./lib.ts";

const codec = await eventStreamCodec();

const CHUNKS = 50;
const enc = new TextEncoder();
const { frames } = render("gpt-4o-mini", CHUNKS, true);
const sseReads = frames.map((f) => enc.encode(f));
const n = frames.length;

const ev = (type: string, payload: unknown) => codec.encode({
  headers: { ":event-type": { type: "string", value: type }, ":content-type": { type: "string", value: "application/json" }, ":message-type": { type: "string", value: "event" } },
  body: fromUtf8(JSON.stringify(payload)),
});
const pad = () => randomBytes(4).toString("hex");
const words = Array.from({ length: CHUNKS }, (_, i) => ` word${i}`);
const esFrames = [
  ev("messageStart", { role: "assistant", p: pad() }),
  ...words.map((w) => ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: w }, p: pad() })),
  ev("contentBlockStop", { contentBlockIndex: 0, p: pad() }),
  ev("messageStop", { stopReason: "end_turn", p: pad() }),
  ev("metadata", { usage: { inputTokens: 12, outputTokens: CHUNKS, totalTokens: 12 + CHUNKS }, metrics: { latencyMs: 300 }, p: pad() }),
];
const esWhole = Buffer.concat(esFrames);
const esCut: Uint8Array[] = [];
for (let i = 0; i < esWhole.length; i += 512) esCut.push(esWhole.subarray(i, i + 512));
const sseWhole = enc.encode(frames.join(""));
const sseCut: Uint8Array[] = [];
for (let i = 0; i < sseWhole.length; i += 512) sseCut.push(sseWhole.subarray(i, i + 512));

function sse(reads: Uint8Array[]): string[] {
  const p = new SseParser();
  const out: string[] = [];
  for (const r of reads) for (const e of p.push(r)) out.push(e.data);
  return out;
}
function es(reads: Uint8Array[]): string[] {
  const d = new EventStreamDecoder(codec);
  const out: string[] = [];
  for (const r of reads) for (const m of d.push(r)) out.push(toFrame(m).payload);
  d.end();
  return out;
}
function sseToChunks(reads: Uint8Array[]): unknown[] {
  const p = new SseParser();
  const out: unknown[] = [];
  for (const r of reads) for (const e of p.push(r)) if (e.data !== "[DONE]") out.push(JSON.parse(e.data));
  return out;
}
function esToChunks(reads: Uint8Array[]): unknown[] {
  const d = new EventStreamDecoder(codec);
  const t = new ConverseToChatStream({ includeUsage: true, provider: "bench", model: "m" });
  const out: unknown[] = [];
  for (const r of reads) for (const m of d.push(r)) { const f = toFrame(m); for (const c of t.push({ event: f.type, data: f.payload })) out.push(c); }
  return out;
}

const sseCheck = () => assertEqual(sse(sseReads).length, n, "SSE events");
const esCheck = () => {
  const got = es(esFrames);
  assertEqual(got.length, esFrames.length, "event-stream frames");
  assertEqual(JSON.parse(got[1]!).delta.text, " word0", "first delta");
  assertEqual(es(esCut), got, "512-byte reads decode the same");
};
await runGroup(`decode per event, ${n} SSE frames vs ${esFrames.length} event-stream frames, one read per frame`, [
  { name: "SSE SseParser", fn: () => sse(sseReads), check: sseCheck },
  { name: "event-stream decoder", fn: () => es(esFrames), check: esCheck },
], { perItem: { count: n, unit: "event" } });
await runGroup(`decode per event, 512-byte reads`, [
  { name: "SSE SseParser", fn: () => sse(sseCut), check: () => assertEqual(sse(sseCut).length, n, "SSE events") },
  { name: "event-stream decoder", fn: () => es(esCut), check: esCheck },
], { perItem: { count: n, unit: "event" } });
await runGroup(`to chat chunks, one read per frame`, [
  { name: "SSE parse + JSON.parse", fn: () => sseToChunks(sseReads), check: () => assertEqual(sseToChunks(sseReads).length, n - 1, "chat chunks") },
  { name: "event-stream + ConverseToChatStream", fn: () => esToChunks(esFrames), check: () => assertEqual(esToChunks(esFrames).length, CHUNKS + 4, "chat chunks (role, 50 text, finish, usage, [DONE])") },
], { perItem: { count: n, unit: "event" } });
