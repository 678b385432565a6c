// The soak traffic mix: what each kind of request sends and what counts as its correct answer. Weights are per 100
// requests. "Valid" kinds must answer 200 with a complete body or stream; error kinds must answer their exact
// status with the error envelope; aborted kinds only need to have started a 200 stream before we hung up.
import { randomUUID } from "node:crypto";
import { BENCH_KEY } from "../load/config.ts";
import { BAD_REQUEST_MODEL, BENCH_MODEL, FLAKY_MODEL } from "./config.ts";
import type { Exchange } from "./exchange.ts";

export type Api = "chat" | "messages";

export interface Kind {
  name: string;
  weight: number;
  api: Api;
  stream: boolean;
  /** Expected HTTP status. */
  status: number;
  abort?: boolean;
  /** fresh: a new idempotency key (remembered on success); replay: a remembered key with its original body. */
  idem?: "fresh" | "replay";
  body: () => string;
  /** Extra check of a response with the expected status; returns what is wrong, or undefined. */
  check?: (x: Exchange) => string | undefined;
}

const PATH: Record<Api, string> = { chat: "/api/v1/chat/completions", messages: "/api/v1/messages" };
const HEADERS: Record<Api, Record<string, string>> = {
  chat: { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}` },
  messages: { "content-type": "application/json", "x-api-key": BENCH_KEY, "anthropic-version": "2023-06-01" },
};
export const pathOf = (api: Api) => PATH[api];
export const headersOf = (api: Api, idemKey?: string) => (idemKey ? { ...HEADERS[api], "idempotency-key": idemKey } : HEADERS[api]);

// Prompts vary a little so request bodies (and cache keys, budget estimates) are not all byte-identical.
let seq = 0;
const prompt = () => `Say hello in fifty tokens (#${seq++ % 997}).`;
const chat = (extra: Record<string, unknown> = {}, model = BENCH_MODEL) => () =>
  JSON.stringify({ model, messages: [{ role: "user", content: prompt() }], max_tokens: 256, ...extra });
const messages = (extra: Record<string, unknown> = {}) => () =>
  JSON.stringify({ model: BENCH_MODEL, max_tokens: 256, messages: [{ role: "user", content: prompt() }], ...extra });
const fallback = { providerOptions: { gateway: { models: [BENCH_MODEL] } } };

const DONE = "data: [DONE]\n\n";
const MESSAGE_STOP = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';

function chatJson(x: Exchange): string | undefined {
  const b = JSON.parse(x.body);
  if (typeof b.choices?.[0]?.message?.content !== "string" || !b.choices[0].message.content) return "no message content";
  if (!b.providerMetadata?.gateway?.generationId) return "no providerMetadata.gateway.generationId";
  if (!(b.usage?.completion_tokens > 0)) return "no usage";
}
function chatStream(includeUsage: boolean) {
  return (x: Exchange): string | undefined => {
    if (!x.body.endsWith(DONE)) return "stream did not end with data: [DONE]";
    const usage = /"usage":\{"prompt_tokens":\d+/.test(x.body);
    if (includeUsage && !usage) return "include_usage: no usage chunk before [DONE]";
    if (!includeUsage && usage) return "usage chunk sent without include_usage";
  };
}
function messagesJson(x: Exchange): string | undefined {
  const b = JSON.parse(x.body);
  if (b.type !== "message" || b.content?.[0]?.type !== "text" || !b.content[0].text) return "not a Messages response with text";
  if (!(b.usage?.output_tokens > 0)) return "no usage";
}
function messagesStream(x: Exchange): string | undefined {
  if (!x.body.endsWith(MESSAGE_STOP)) return "stream did not end with message_stop";
  if (!/"type":"message_delta".*"output_tokens":\d+/.test(x.body)) return "no message_delta with output_tokens";
}
function errorEnvelope(code: string) {
  return (x: Exchange): string | undefined => {
    const b = JSON.parse(x.body);
    if (b.error?.code !== code || typeof b.error.message !== "string") return `expected error.code ${code}, got ${x.body.slice(0, 200)}`;
    if (!x.headers["x-request-id"]) return "no x-request-id on an error";
  };
}

export const KINDS: Kind[] = [
  { name: "chat-json", weight: 18, api: "chat", stream: false, status: 200, body: chat(), check: chatJson },
  { name: "chat-stream", weight: 13, api: "chat", stream: true, status: 200, body: chat({ stream: true }), check: chatStream(false) },
  { name: "chat-stream-usage", weight: 13, api: "chat", stream: true, status: 200, body: chat({ stream: true, stream_options: { include_usage: true } }), check: chatStream(true) },
  { name: "msg-json", weight: 8, api: "messages", stream: false, status: 200, body: messages(), check: messagesJson },
  { name: "msg-stream", weight: 10, api: "messages", stream: true, status: 200, body: messages({ stream: true }), check: messagesStream },
  { name: "abort-chat", weight: 5, api: "chat", stream: true, status: 200, abort: true, body: chat({ stream: true, stream_options: { include_usage: true } }) },
  { name: "abort-msg", weight: 2, api: "messages", stream: true, status: 200, abort: true, body: messages({ stream: true }) },
  { name: "flaky-json", weight: 6, api: "chat", stream: false, status: 200, body: chat(fallback, FLAKY_MODEL), check: chatJson },
  { name: "flaky-stream", weight: 6, api: "chat", stream: true, status: 200, body: chat({ stream: true, ...fallback }, FLAKY_MODEL), check: chatStream(false) },
  { name: "upstream-400", weight: 3, api: "chat", stream: false, status: 400, body: chat({}, BAD_REQUEST_MODEL), check: errorEnvelope("INVALID_REQUEST") },
  // Refused by the gateway's own validation, before any upstream call.
  { name: "invalid-400", weight: 2, api: "chat", stream: false, status: 400, check: errorEnvelope("INVALID_REQUEST"), body: () => JSON.stringify({ model: BENCH_MODEL, messages: "hello" }) },
  { name: "idem-fresh", weight: 5, api: "chat", stream: false, status: 200, idem: "fresh", body: chat(), check: chatJson },
  { name: "idem-fresh-stream", weight: 3, api: "chat", stream: true, status: 200, idem: "fresh", body: chat({ stream: true }), check: chatStream(false) },
  { name: "idem-replay", weight: 5, api: "chat", stream: false, status: 200, idem: "replay", body: chat() },
];

/** Deterministic weighted choice: kind of request n (a fixed shuffle of 100 slots, repeated). */
export function kindPicker(kinds: Kind[] = KINDS): (n: number) => Kind {
  const slots: Kind[] = [];
  for (const k of kinds) for (let i = 0; i < k.weight; i++) slots.push(k);
  let s = 0x9e3779b9; // xorshift, fixed seed: the same order every run
  for (let i = slots.length - 1; i > 0; i--) {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    const j = (s >>> 0) % (i + 1);
    [slots[i], slots[j]] = [slots[j]!, slots[i]!];
  }
  return (n) => slots[n % slots.length]!;
}

export const newIdemKey = () => randomUUID();

/** Checks of a replayed request against the original it replays. */
export function checkReplay(x: Exchange, original: { stream: boolean; body: string }): string | undefined {
  if (x.headers["idempotent-replayed"] !== "true") return "no Idempotent-Replayed: true";
  if (!x.headers["x-mg-original-request-id"]) return "no x-mg-original-request-id";
  if (original.stream) return x.body.endsWith(DONE) ? undefined : "replayed stream did not end with data: [DONE]";
  if (x.body !== original.body) return "replayed body differs from the original";
}
