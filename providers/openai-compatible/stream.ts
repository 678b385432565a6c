// Relay of an OpenAI-protocol stream to an OpenAI-protocol client: events pass through as they came (no
// per-chunk JSON re-serialisation); only the usage chunk is parsed, and dropped if the client did not ask for it.
import { Readable } from "node:stream";
import { SseParser, type SseEvent } from "../../core/sse/parse.ts";
import { GatewayError } from "../../core/errors.ts";
import type { CallOptions } from "../../core/contracts/provider.ts";
import { releaseBody, transportError } from "../http.ts";
import { fromOpenAIUsage } from "./usage.ts";

type RelayCall = Pick<CallOptions, "reportUsage" | "reportFirstToken">;

/** Per-event decision shared by both relays: 1 = forward, 0 = drop, -1 = forward and stop ([DONE]). */
class Relay {
  private first = true;
  constructor(private readonly clientWantsUsage: boolean, private readonly call: RelayCall) {}

  step(ev: SseEvent): 1 | 0 | -1 {
    const d = ev.data;
    if (d === "[DONE]") return -1;
    if (this.first) {
      this.call.reportFirstToken();
      this.first = false;
    }
    // `"usage":{` can only be the key itself: inside a JSON string the quotes would be escaped. Most chunks end
    // with a top-level `"usage":null}` (the gateway always asks for include_usage): that settles it without a scan.
    if (!d.endsWith('"usage":null}') && d.includes('"usage":{')) {
      const chunk = JSON.parse(d);
      if (chunk.usage) {
        this.call.reportUsage(fromOpenAIUsage(chunk.usage));
        if (!this.clientWantsUsage && Array.isArray(chunk.choices) && chunk.choices.length === 0) return 0;
      }
    }
    return 1;
  }
}

const endedEarly = (provider: string) =>
  new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} ended the stream before [DONE]`, { details: { provider } });

/** Relay over already-parsed events. */
export async function* relayChatStream(
  events: AsyncIterable<SseEvent>, clientWantsUsage: boolean, call: RelayCall, provider: string,
): AsyncGenerator<SseEvent> {
  const relay = new Relay(clientWantsUsage, call);
  for await (const ev of events) {
    const s = relay.step(ev);
    if (s !== 0) yield ev;
    if (s === -1) return;
  }
  throw endedEarly(provider);
}

/**
 * The hot path: upstream bytes -> SSE parse -> relay in one generator (each generator layer costs a few promise
 * hops per event). Transport failures mid-stream become gateway errors (rendered as the protocol's error event).
 */
export async function* relayChatBody(
  body: AsyncIterable<Uint8Array>, clientWantsUsage: boolean, call: RelayCall, provider: string, signal: AbortSignal,
): AsyncGenerator<SseEvent> {
  const relay = new Relay(clientWantsUsage, call);
  const parser = new SseParser();
  // Leaving a for-await early destroys a Node stream with a fresh AbortError (stack trace and all) — after
  // every [DONE], since the body's end is still in flight. Iterate without destroy-on-return instead: after
  // [DONE] the rest (normally just the end) is drained, and any other early exit destroys the body quietly.
  const readable = body instanceof Readable ? body : undefined;
  const source: AsyncIterable<Uint8Array> = readable ? readable.iterator({ destroyOnReturn: false }) : body;
  let done = false;
  try {
    for await (const chunk of source) {
      const events = parser.push(chunk);
      for (let i = 0; i < events.length; i++) {
        const ev = events[i]!;
        const s = relay.step(ev);
        if (s !== 0) yield ev;
        if (s === -1) {
          done = true;
          return;
        }
      }
    }
  } catch (err) {
    throw transportError(provider, err, signal);
  } finally {
    releaseBody(readable, done);
  }
  throw endedEarly(provider);
}

