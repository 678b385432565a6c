// Relay of an OpenAI-protocol stream to an OpenAI-protocol client: events pass through as they came (no
// per-chunk JSON re-serialisation); only the usage chunk is parsed, and dropped if the client did not ask for it.
import type { SseEvent } from "../../core/sse/parse.ts";
import { GatewayError } from "../../core/errors.ts";
import type { CallOptions } from "../types.ts";
import { fromOpenAIUsage } from "./usage.ts";

export async function* relayChatStream(
  events: AsyncIterable<SseEvent>, clientWantsUsage: boolean, call: Pick<CallOptions, "reportUsage" | "reportFirstToken">, provider: string,
): AsyncGenerator<SseEvent> {
  let first = true;
  for await (const ev of events) {
    const d = ev.data;
    if (d === "[DONE]") {
      yield ev;
      return;
    }
    if (first) {
      call.reportFirstToken();
      first = false;
    }
    // `"usage":{` can only be the key itself: inside a JSON string the quotes would be escaped.
    if (d.includes('"usage":{')) {
      const chunk = JSON.parse(d);
      if (chunk.usage) {
        call.reportUsage(fromOpenAIUsage(chunk.usage));
        if (!clientWantsUsage && Array.isArray(chunk.choices) && chunk.choices.length === 0) continue;
      }
    }
    yield ev;
  }
  throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} ended the stream before [DONE]`, { details: { provider } });
}
