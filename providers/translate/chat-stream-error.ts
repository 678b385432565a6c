// An OpenAI-protocol stream reports a failure in-band as a chunk with `error`: translators turn it into the
// gateway's error, which the client sees as its own protocol's error event (or, before the stream's first event, as
// its error answer). Judged as the same error sent as an HTTP status (providers/in-band-error.ts): an
// invalid_request_error is the client's 400, never retried; server errors and rate limits stay retryable.
import { inBandError } from "../in-band-error.ts";
import { openaiErrorStatus } from "../codecs/openai-error-status.ts";

/** Throws when a parsed chat chunk is an error chunk. */
export function throwIfChatStreamError(chunk: any, provider: string): void {
  if (!chunk?.error) return;
  throw inBandError(provider, openaiErrorStatus(chunk.error), chunk.error);
}
