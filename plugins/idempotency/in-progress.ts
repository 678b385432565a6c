// A duplicate waits for the first request with its key, but not for ever: the first one's process may be gone
// (kill -9, a crashed worker), and its claim then holds until its 15-minute lease ends, with nothing sent meanwhile.
// Past the wait the duplicate is told the key is still in progress (409, which the openai and Anthropic SDKs retry
// after Retry-After); a retry then replays the first answer once it is kept, or runs once the dead claim lapses.
import { GatewayError } from "../../core/errors.ts";

/** What a duplicate is told to wait before it asks again: the first request may end any moment. */
export const IN_PROGRESS_RETRY_AFTER_S = 1;

/** The 409 a duplicate gets after waiting `waitedMs` (server.upstream_timeout_ms) for the first request with its key. */
export function inProgressError(field: string, waitedMs: number): GatewayError {
  return new GatewayError(
    409,
    "CONFLICT",
    `A request with this idempotency key is still in progress (waited ${waitedMs} ms, server.upstream_timeout_ms, for it to finish); ` +
      "retry later to get its answer, or send a new key to run the request again",
    { details: { field, reason: "key_in_progress", waited_ms: waitedMs }, retryAfter: IN_PROGRESS_RETRY_AFTER_S },
  );
}
