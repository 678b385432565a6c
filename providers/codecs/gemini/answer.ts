// The Gemini generate answer reader shared by the gemini and vertex drivers: errors mapped, the JSON or SSE events
// passed through as they are, each checked to be JSON first (a malformed one is the provider's error, never relayed
// nor handed to a translator), a stream's first token reported (a JSON answer has none: only streams have a ttft),
// and a stream's usage reported once per read, before any of the read goes on (usageMetadata is cumulative: the
// read's last one), so a consumer that stops early (a block rule) leaves the upstream's own count billed.
import { sseReads } from "../../sse-reads.ts";
import { fromGeminiUsage } from "../../translate/chat-to-gemini/response.ts";
import type { SseEvent } from "../../../core/sse/parse.ts";
import type { CallOptions, ProviderResult } from "../../../core/contracts/provider.ts";
import { readUpstreamJson, transportError, type UpstreamResponse } from "../../http.ts";
import { geminiFailure } from "./errors.ts";
import { checkGeminiAnswer } from "../../answer-shape.ts";
import { isJsonText } from "../../json-text.ts";
import { unreadableEvent } from "../../unreadable-event.ts";
import { fromGeminiAnswer, upstreamRequestId, withUpstreamRequestId } from "../../upstream-request-id.ts";

/** Gemini's answer to a generate call, wherever it was sent (the Gemini API or Vertex AI): its JSON or SSE events. */
export async function geminiAnswer(provider: string, res: UpstreamResponse, call: CallOptions, stream: boolean): Promise<ProviderResult> {
  if (res.status < 200 || res.status >= 300) throw await geminiFailure(provider, res);
  // A stream's id would be in its events (responseId): only an id header is passed on, no event is read for it.
  if (stream) return { kind: "stream", headers: withUpstreamRequestId(undefined, upstreamRequestId(res.headers)), events: relay(sseReads(res.body), call, provider) };
  const json = checkGeminiAnswer(provider, await readUpstreamJson(provider, res, call.signal));
  return { kind: "json", headers: withUpstreamRequestId(undefined, fromGeminiAnswer(res.headers, json)), body: json };
}

async function* relay(reads: AsyncIterable<readonly SseEvent[]>, call: CallOptions, provider: string): AsyncGenerator<SseEvent> {
  let first = true;
  try {
    for await (const read of reads) {
      const unreadable = reportReadUsage(read, call);
      for (let i = 0; i < read.length; i++) {
        const ev = read[i]!;
        if (i === unreadable) throw unreadableEvent(provider);
        // The first token is the first event with content: an in-band error frame (a 503 "overloaded") or a usage-only
        // event is not one, so a failure then stays retryable (core/dispatch.ts commits a stream at its first token).
        // `"parts"` unescaped is only ever the key of a candidate's content.
        if (first && ev.data.includes('"parts"')) {
          call.reportFirstToken();
          first = false;
        }
        yield ev;
      }
    }
    // A stream that ended with no content (a prompt blocked, an empty answer) was still streamed: its time to first
    // token is its end, as the ledger and console tell streamed requests by it.
    if (first) call.reportFirstToken();
  } catch (err) {
    throw transportError(provider, err, call.signal);
  }
}

/**
 * The last usageMetadata of the read's events up to the first the stream ends at (one that is not JSON, an in-band
 * error), reported; the index of the first event that is not JSON (read.length when all are), so each event is checked
 * once. The first one is the prompt's, billed even if the stream dies later. Gemini puts usageMetadata on every chunk
 * and it is cumulative: only the last one before the end is parsed (the translators parse every event anyway).
 */
function reportReadUsage(read: readonly SseEvent[], call: CallOptions): number {
  let end = read.length;
  let unreadable = read.length;
  for (let i = 0; i < read.length; i++) {
    const data = read[i]!.data;
    if (!isJsonText(data)) {
      end = unreadable = i;
      break;
    }
    // `"error"` unescaped is only ever a key; only a top-level one is Gemini's in-band error (a function call's
    // arguments may hold one).
    if (data.includes('"error"') && JSON.parse(data)?.error) {
      end = i;
      break;
    }
  }
  for (let i = end - 1; i >= 0; i--) {
    const data = read[i]!.data;
    if (!data.includes('"usageMetadata"')) continue;
    const chunk = JSON.parse(data);
    const usage = chunk?.usageMetadata;
    if (usage) {
      // Google's count is a running one until the chunk that finishes the answer. With several candidates
      // (candidateCount) the first to finish does not end the others: only a lone first candidate's finish is final.
      const candidates = chunk.candidates;
      const final = Array.isArray(candidates) && candidates.length > 0 && candidates.every((c: any) => c?.finishReason && !c.index);
      call.reportUsage(fromGeminiUsage(usage), { final });
      break;
    }
  }
  // Past an in-band error the events are still relayed (the translators end there), so still checked.
  for (let i = end + 1; i < unreadable; i++) if (!isJsonText(read[i]!.data)) return i;
  return unreadable;
}
