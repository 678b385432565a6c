// Relay of a native Anthropic stream to a messages client: frames pass through untouched; only message_start,
// message_delta and error are parsed (usage and in-band errors), so the hot path does no re-serialisation.
import type { SseEvent } from "../../core/sse/parse.ts";
import { GatewayError } from "../../core/errors.ts";
import type { CallOptions } from "../../core/contracts/provider.ts";
import { anthropicStreamError } from "./errors.ts";
import { fromAnthropicUsage } from "./usage.ts";

export async function* relayMessagesStream(
  events: AsyncIterable<SseEvent>, call: Pick<CallOptions, "reportUsage" | "reportFirstToken">, provider: string,
): AsyncGenerator<SseEvent> {
  let usage: Record<string, any> = {};
  let first = true;
  for await (const ev of events) {
    const type = ev.event;
    if (type === "message_start") {
      usage = { ...JSON.parse(ev.data).message?.usage };
      // Input tokens are known (and spent) from here on, even if the stream dies before message_delta.
      call.reportUsage(fromAnthropicUsage(usage));
    } else if (type === "content_block_start" || type === "content_block_delta") {
      if (first) {
        call.reportFirstToken();
        first = false;
      }
    } else if (type === "message_delta") {
      const u = JSON.parse(ev.data).usage ?? {};
      for (const k in u) if (u[k] !== null && u[k] !== undefined) usage[k] = u[k];
      call.reportUsage(fromAnthropicUsage(usage));
    } else if (type === "error") {
      throw anthropicStreamError(provider, JSON.parse(ev.data));
    }
    yield ev;
    if (type === "message_stop") return;
  }
  throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} ended the stream before message_stop`, { details: { provider } });
}
