// The Converse ops (reference §2.1-2.4): a Converse body in (translated by providers/translate/*-to-converse),
// Converse JSON out, or ConverseStream's binary frames decoded into events named by their :event-type (data = the
// JSON payload) for the translator. Exception frames become the gateway's error here, so every translator sees
// them the same way. The provider's configured anthropic-beta goes to Claude in additionalModelRequestFields (betas.ts).
import type { SseEvent } from "../../core/sse/parse.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { GatewayError } from "../../core/errors.ts";
import { holdOpening, type Opening } from "../../core/sse/opening-hold.ts";
import { readUpstreamJson, transportError } from "../http.ts";
import { checkConverseAnswer } from "../answer-shape.ts";
import type { BedrockEnv } from "./env.ts";
import { bedrockUrl } from "./url.ts";
import { bedrockFailure, framingError, streamFrameError } from "./errors.ts";
import { decodeFrameReads, EventStreamFramingError, type BedrockFrame } from "./eventstream.ts";
import { fromConverseUsage } from "../translate/chat-to-converse/response.ts";
import { withConverseBetas, withoutBetaHeader } from "./betas.ts";
import { upstreamRequestId, withUpstreamRequestId } from "../upstream-request-id.ts";

export async function converse(env: BedrockEnv, body: any, target: Target, call: CallOptions, stream: boolean): Promise<ProviderResult> {
  const url = bedrockUrl(env.config, target, env.auth.region, stream ? "converse-stream" : "converse");
  // Bedrock reads Claude's betas from the body alone: the configured anthropic-beta goes there, not as a header.
  const headers: Record<string, string> = { "content-type": "application/json", accept: stream ? "application/vnd.amazon.eventstream" : "application/json", ...withoutBetaHeader(env.config.headers) };
  const sent = withConverseBetas(body, target.upstreamModel, env.config.headers);
  const req = await env.auth.authorize({ url, headers, body: JSON.stringify(sent) }, target);
  const res = await env.client.send(req, call.signal, target.timeoutMs);
  if (res.status < 200 || res.status >= 300) throw await bedrockFailure(env.name, res);
  const out = withUpstreamRequestId(undefined, upstreamRequestId(res.headers));
  if (stream) return { kind: "stream", headers: out, events: converseEvents(res.body, call, env.name) };
  const json = checkConverseAnswer(env.name, await readUpstreamJson(env.name, res, call.signal));
  return { kind: "json", headers: out, body: json };
}

/**
 * ConverseStream frames -> events `{event: <:event-type>, data: <payload>}`; exception frames throw. messageStart is
 * held (core/sse/opening-hold.ts) until the answer begins (a content block, or messageStop's stopReason): a stream
 * that ends before that is an empty stream, failed before dispatch commits it (within the bounded hold), so it is
 * retried elsewhere.
 */
export function converseEvents(body: AsyncIterable<Uint8Array>, call: ConverseCall, provider: string): AsyncIterableIterator<SseEvent> {
  const opening: Opening = { begun: false };
  return holdOpening(frames(body, call, provider, opening), opening, call, body);
}

type ConverseCall = Pick<CallOptions, "reportFirstToken" | "reportFirstEvent" | "reportUsage" | "signal">;

async function* frames(body: AsyncIterable<Uint8Array>, call: ConverseCall, provider: string, opening: Opening): AsyncGenerator<SseEvent> {
  let first = true;
  try {
    for await (const read of decodeFrameReads(body)) {
      reportReadUsage(read, call);
      for (const f of read) {
        if (f.messageType !== "event") throw streamFrameError(provider, f);
        // The first content: a delta, or a tool block's start (its id and name are output already).
        if (first && (f.type === "contentBlockDelta" || f.type === "contentBlockStart")) {
          call.reportFirstToken();
          first = false;
        }
        if (!opening.begun && f.type !== "messageStart") opening.begun = true;
        yield { event: f.type, data: f.payload };
      }
    }
  } catch (err) {
    throw err instanceof EventStreamFramingError ? framingError(provider, err) : transportError(provider, err, call.signal);
  }
  if (!opening.begun) throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} sent an empty stream`, { retryable: true, details: { provider, reason: "empty_stream" } });
}

/**
 * The usage of a read's metadata event (the upstream's count of the whole answer), reported before any of the read is
 * handed on (providers/sse-reads.ts says why): a guardrail stopping the stream on text in the same read bills it. Only
 * the events before an exception frame count, as those are all the stream relays.
 */
function reportReadUsage(read: BedrockFrame[], call: ConverseCall): void {
  for (const f of read) {
    if (f.messageType !== "event") return;
    if (f.type !== "metadata") continue;
    let usage: unknown;
    try {
      usage = JSON.parse(f.payload)?.usage;
    } catch {
      return; // the translator refuses the bad event when it comes to it
    }
    return call.reportUsage(fromConverseUsage(usage ?? {}), { final: true });
  }
}
