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

/** `body`: the upstream body `events` are read from, whose answer deadline lasts through the hold. */
export function relayMessagesStream(events: AsyncIterable<SseEvent>, call: RelayCall, provider: string, body?: object): AsyncIterableIterator<SseEvent> {
  const opening: Opening = { begun: false };
  return holdOpening(relay(events, call, provider, opening), opening, call, body);
}

async function* relay(events: AsyncIterable<SseEvent>, call: RelayCall, provider: string, opening: Opening): AsyncGenerator<SseEvent> {
  let usage: Record<string, any> = {};
  let first = true;
  // Web searches begun so far: Anthropic bills them even when the stream is cut before message_delta counts them.
  let searches = 0;
  const report = () => {
    const u = fromAnthropicUsage(usage);
    if (searches > (u.webSearches ?? 0)) u.webSearches = searches;
    call.reportUsage(u);
  };
  for await (const ev of events) {
    const type = ev.event;
    // An `error` event's data that is not JSON (a proxy's words) is read below; nothing else goes out unread.
    if (type !== "error" && !isJsonText(ev.data)) throw unreadableEvent(provider);
    if (type === "message_start") {
      usage = { ...JSON.parse(ev.data).message?.usage };
      // Input tokens are known (and spent) from here on, even if the stream dies before message_delta.
      report();
    } else if (type === "content_block_start" || type === "content_block_delta") {
      if (first) {
        call.reportFirstToken();
        first = false;
      }
      if (type === "content_block_start" && ev.data.includes('"server_tool_use"') && JSON.parse(ev.data).content_block?.name === "web_search") {
        searches++;
        report();
      }
    } else if (type === "message_delta") {
      const u = JSON.parse(ev.data).usage ?? {};
      for (const k in u) if (u[k] !== null && u[k] !== undefined) usage[k] = u[k];
      report();
    } else if (type === "error") {
      throw anthropicErrorEvent(provider, ev.data);
    }
    if (!opening.begun && type !== "message_start" && type !== "ping") {
      if (type === "message_stop") throw emptyStream(provider);
      opening.begun = true;
    }
    yield ev;
    if (type === "message_stop") return;
  }
  if (!opening.begun) throw emptyStream(provider);
  throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} ended the stream before message_stop`, { details: { provider } });
}

const emptyStream = (provider: string) =>
  new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} sent an empty stream`, { retryable: true, details: { provider, reason: "empty_stream" } });
