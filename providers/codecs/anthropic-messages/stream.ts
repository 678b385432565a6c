// Relay of a native Anthropic stream to a messages client: frames pass through untouched, each checked to be JSON
// first (json-text.ts: no allocation; a malformed one ends the stream with the provider's error, never reaching the
// client or a translator); only message_start, message_delta, error and server-tool block starts are parsed (usage,
// in-band errors, web searches), so the hot path does no re-serialisation. message_start and pings are held
// (core/sse/opening-hold.ts) until the answer begins (a content block, or a message_delta's stop_reason): a stream
// that ends or errs before that fails before dispatch commits it, so it is retried elsewhere instead of reaching the
// client as an empty answer (past the bounded hold, it ends with an error event).
import type { SseEvent } from "../../../core/sse/parse.ts";
import { holdOpening, type Opening } from "../../../core/sse/opening-hold.ts";
import { GatewayError } from "../../../core/errors.ts";
import type { CallOptions } from "../../../core/contracts/provider.ts";
import { anthropicErrorEvent } from "./errors.ts";
import { fromAnthropicUsage } from "./usage.ts";
import { isJsonText } from "../../json-text.ts";
import { unreadableEvent } from "../../unreadable-event.ts";

type RelayCall = Pick<CallOptions, "reportUsage" | "reportFirstToken" | "reportFirstEvent">;

/**
 * `reads`: the upstream's events, grouped by the read they came in (sse-reads.ts). `body`: the upstream body they are
 * read from, whose answer deadline lasts through the hold.
 */
export function relayMessagesStream(reads: AsyncIterable<readonly SseEvent[]>, call: RelayCall, provider: string, body?: object): AsyncIterableIterator<SseEvent> {
  const opening: Opening = { begun: false };
  return holdOpening(relay(reads, call, provider, opening), opening, call, body);
}

async function* relay(reads: AsyncIterable<readonly SseEvent[]>, call: RelayCall, provider: string, opening: Opening): AsyncGenerator<SseEvent> {
  const usage = new ReadUsage(call);
  let first = true;
  for await (const read of reads) {
    // What the whole read reports is metered before any of it goes on: a consumer that stops at one of its events (a
    // block rule) leaves the upstream's own count billed (message_delta), not the estimate of the text before it.
    usage.note(read);
    for (let i = 0; i < read.length; i++) {
      const ev = read[i]!;
      const type = ev.event;
      // An `error` event's data that is not JSON (a proxy's words) is read below; nothing else goes out unread.
      if (type !== "error" && !isJsonText(ev.data)) throw unreadableEvent(provider);
      if (type === "error") throw anthropicErrorEvent(provider, ev.data);
      if (first && (type === "content_block_start" || type === "content_block_delta")) {
        call.reportFirstToken();
        first = false;
      }
      if (!opening.begun && type !== "message_start" && type !== "ping") {
        if (type === "message_stop") throw emptyStream(provider);
        opening.begun = true;
      }
      yield ev;
      if (type === "message_stop") return;
    }
  }
  if (!opening.begun) throw emptyStream(provider);
  throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} ended the stream before message_stop`, { details: { provider } });
}

/** The usage a stream reported so far, reported through `call` once per read that changed it. */
class ReadUsage {
  private usage: Record<string, any> = {};
  /** Web searches begun so far: Anthropic bills them even when the stream is cut before message_delta counts them. */
  private searches = 0;
  constructor(private readonly call: RelayCall) {}

  /** The read's events up to the first the relay ends at (one it cannot read, an error, message_stop). */
  note(read: readonly SseEvent[]): void {
    let changed = false;
    let final = false;
    for (let i = 0; i < read.length; i++) {
      const { event: type, data } = read[i]!;
      if (type === "error" || type === "message_stop" || !isJsonText(data)) break;
      if (type === "message_start") {
        // Input tokens are known (and spent) from here on, even if the stream dies before message_delta.
        this.usage = { ...JSON.parse(data).message?.usage };
        changed = true;
      } else if (type === "message_delta") {
        const u = JSON.parse(data).usage ?? {};
        for (const k in u) if (u[k] !== null && u[k] !== undefined) this.usage[k] = u[k];
        changed = final = true; // message_delta's usage is cumulative: the answer's whole count
      } else if (type === "content_block_start" && data.includes('"server_tool_use"') && JSON.parse(data).content_block?.name === "web_search") {
        this.searches++;
        changed = true;
      }
    }
    if (!changed) return;
    const u = fromAnthropicUsage(this.usage);
    if (this.searches > (u.webSearches ?? 0)) u.webSearches = this.searches;
    this.call.reportUsage(u, { final });
  }
}

const emptyStream = (provider: string) =>
  new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} sent an empty stream`, { retryable: true, details: { provider, reason: "empty_stream" } });
