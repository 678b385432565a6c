// Claude through InvokeModel / InvokeModelWithResponseStream (reference §5): the driver's native `messages` op.
// The client's Anthropic body passes through (cache_control included) with Bedrock's changes: anthropic_version in
// the body, no model (it is in the path) and no stream (the path chooses), betas from the anthropic-beta header into
// `anthropic_beta` (only those Bedrock accepts: one unknown beta fails the whole request) — the provider's configured
// anthropic-beta (providers.<name>.headers) too, with the client's added to it: Bedrock reads no beta header. Stream frames carry
// `{"bytes": base64(one Anthropic event)}`; decoded, they are exactly Anthropic's SSE events, relayed by the
// Messages codec's relay (providers/codecs/anthropic-messages: usage, in-band errors, message_stop).
import type { SseEvent } from "../../core/sse/parse.ts";
import { GatewayError } from "../../core/errors.ts";
import { DROPPED_PARAMS_HEADER, type CallOptions, type ProviderResult, type Target } from "../../core/contracts/provider.ts";
import { transportError } from "../http.ts";
import { relayMessagesStream } from "../codecs/anthropic-messages/stream.ts";
import { acceptMessage } from "../codecs/anthropic-messages/response.ts";
import { applyMessagesLimit } from "../codecs/anthropic-messages/request.ts";
import { refuseThread } from "../codecs/anthropic-messages/thread.ts";
import type { BedrockEnv } from "./env.ts";
import { bedrockUrl } from "./url.ts";
import { bedrockFailure, framingError, streamFrameError } from "./errors.ts";
import { decodeFrameReads, EventStreamFramingError, type BedrockFrame } from "./eventstream.ts";
import { bodyJson } from "../upstream-json.ts";
import { accepted, betaList, configuredBetas, withoutBetaHeader } from "./betas.ts";
import { upstreamRequestId, withUpstreamRequestId } from "../upstream-request-id.ts";

export const BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31";

/**
 * Not Bedrock's: the model and stream are in the path, `thread` here is a null one (any other is refused), and the
 * others are first-party-only fields Bedrock refuses.
 */
const NOT_SENT = new Set(["model", "stream", "providerOptions", "thread"]);
const FIRST_PARTY_ONLY = ["metadata", "service_tier", "container", "mcp_servers", "inference_geo"];

function header(h: CallOptions["clientHeaders"], name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v.join(",") : v;
}

export function invokeBody(body: Record<string, any>, target: Target, provider: string, clientHeaders: CallOptions["clientHeaders"], configured?: Record<string, string>): { body: Record<string, unknown>; dropped: string[] } {
  refuseThread(body); // Bedrock keeps no threads and refuses the key: the SDK's threads go on unthreaded on this 400
  const out: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const k in body) {
    if (NOT_SENT.has(k)) continue;
    if (FIRST_PARTY_ONLY.includes(k)) { dropped.push(k); continue; }
    out[k] = body[k];
  }
  out.anthropic_version ??= BEDROCK_ANTHROPIC_VERSION;
  const betas = invokeBetas(body, clientHeaders, configured);
  if (betas.droppedHeader) dropped.push("anthropic-beta");
  if (betas.list) out.anthropic_beta = betas.list;
  applyMessagesLimit(out, body, target, provider);
  return { body: out, dropped };
}

/**
 * The body's `anthropic_beta` sent: the client's own field as it is, with the betas Bedrock accepts of the provider's
 * configured anthropic-beta and of the client's header added, each once (`droppedHeader`: some of the client's were
 * not; the operator's are the operator's business). Undefined list: none of them names any.
 */
export function invokeBetas(body: Record<string, any>, clientHeaders: CallOptions["clientHeaders"], configured?: Record<string, string>): { list: unknown; droppedHeader: boolean } {
  const asked = betaList(header(clientHeaders, "anthropic-beta"));
  const fromClient = accepted(asked);
  const kept = [...new Set([...accepted(configuredBetas(configured)), ...fromClient])];
  const droppedHeader = fromClient.length < asked.length;
  if (!kept.length) return { list: body.anthropic_beta, droppedHeader };
  return { list: [...new Set([...(Array.isArray(body.anthropic_beta) ? body.anthropic_beta : []), ...kept])], droppedHeader };
}

export async function invokeMessages(env: BedrockEnv, body: any, target: Target, call: CallOptions): Promise<ProviderResult> {
  const stream = body.stream === true;
  const t = invokeBody(body, target, env.name, call.clientHeaders, env.config.headers);
  const url = bedrockUrl(env.config, target, env.auth.region, stream ? "invoke-with-response-stream" : "invoke");
  const headers: Record<string, string> = stream
    ? { "content-type": "application/json", accept: "application/vnd.amazon.eventstream", "x-amzn-bedrock-accept": "application/json", ...withoutBetaHeader(env.config.headers) }
    : { "content-type": "application/json", accept: "application/json", ...withoutBetaHeader(env.config.headers) };
  const req = await env.auth.authorize({ url, headers, body: JSON.stringify(t.body) }, target);
  const res = await env.client.send(req, call.signal, target.timeoutMs);
  if (res.status < 200 || res.status >= 300) throw await bedrockFailure(env.name, res);
  const out: Record<string, string> = { ...withUpstreamRequestId(undefined, upstreamRequestId(res.headers)) };
  if (t.dropped.length) out[DROPPED_PARAMS_HEADER] = t.dropped.join(",");
  if (stream) return { kind: "stream", headers: out, events: guard(relayMessagesStream(anthropicEventReads(res.body, env.name), call, env.name, res.body), env.name, call.signal) };
  const json = await bodyJson(env.name, res, call.signal);
  return { kind: "json", headers: out, body: acceptMessage(env.name, json, call) };
}

/** InvokeModelWithResponseStream frames -> Anthropic SSE events (`event: <type>`, single-line data). */
export async function* anthropicEvents(body: AsyncIterable<Uint8Array>, provider: string): AsyncGenerator<SseEvent> {
  for await (const read of anthropicEventReads(body, provider)) yield* read;
}

/**
 * The same, grouped by the read they came in (relayMessagesStream meters a whole read's usage first). A frame that
 * fails ends the stream after the events before it in its read, as it would one event at a time.
 */
export async function* anthropicEventReads(body: AsyncIterable<Uint8Array>, provider: string): AsyncGenerator<SseEvent[]> {
  for await (const frames of decodeFrameReads(body)) {
    const read: SseEvent[] = [];
    try {
      for (const f of frames) {
        const ev = anthropicEvent(f, provider);
        if (ev) read.push(ev);
      }
    } catch (err) {
      if (read.length) yield read;
      throw err;
    }
    if (read.length) yield read;
  }
}

/** One frame's event; undefined for a frame the AWS SDK would skip. */
function anthropicEvent(f: BedrockFrame, provider: string): SseEvent | undefined {
  if (f.messageType !== "event") throw streamFrameError(provider, f);
  if (f.type !== "chunk") return undefined; // unknown events are skipped, as the AWS SDK does
  const b64 = JSON.parse(f.payload)?.bytes;
  if (typeof b64 !== "string") return undefined;
  let data = Buffer.from(b64, "base64").toString("utf8");
  const ev = JSON.parse(data);
  if (typeof ev?.type !== "string") return undefined; // the Anthropic Bedrock SDK drops chunks without a type
  if (data.includes("\n")) data = JSON.stringify(ev); // SSE data must be one line
  return { event: ev.type, data };
}

async function* guard(events: AsyncIterable<SseEvent>, provider: string, signal: AbortSignal): AsyncGenerator<SseEvent> {
  try {
    yield* events;
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw err instanceof EventStreamFramingError ? framingError(provider, err) : transportError(provider, err, signal);
  }
}
