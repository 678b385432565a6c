// An answer larger than its idempotency limit is sent but not kept: holding it (a stream in memory while it runs, a
// row for 24 hours, a replay loaded whole) would let one request cost the gateway without bound. The key is not
// released either, or a retry with it would run, and bill, a second time: a small record says what happened, and a
// retry (or a duplicate that waited) gets a 422 naming the limit. Two limits, because the costs differ: a JSON or
// byte answer is already whole in memory (only its row is at stake), while a stream is held as it passes.
import { GatewayError } from "../../core/errors.ts";
import type { StoredResponse } from "../../core/store/types.ts";

/**
 * The default of idempotency.max_record_bytes, for whole (JSON or byte) answers: ordinary answers replay — a batch of
 * 150 OpenAI embeddings (~5 MB), a few base64 images, a speech file.
 */
export const DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024;
/**
 * The default of idempotency.max_stream_record_bytes, what a stream may hold in memory while it runs: a long
 * reasoning stream (32k tokens are ~6 MB of SSE) replays.
 */
export const DEFAULT_MAX_STREAM_RECORD_BYTES = 16 * 1024 * 1024;

/** The setting a limit comes from, as errors name it. */
export type LimitSetting = "max_record_bytes" | "max_stream_record_bytes";

/** Marks the record kept in place of an answer too large to keep; its value is the limit it passed. */
const MARKER = "x-mg-idempotency-not-kept";
/** Which setting that limit is (records kept before there were two have none: max_record_bytes). */
const SETTING = "x-mg-idempotency-not-kept-setting";

/** What is kept instead of the answer: its status and headers, no body. */
export function tooLargeRecord(status: number, headers: Record<string, string>, limit: number, setting: LimitSetting): StoredResponse {
  return { kind: "json", status, headers: { ...headers, [MARKER]: String(limit), [SETTING]: setting }, body: null };
}

/** Whether `stored` stands for an answer that was too large to keep. */
export function wasTooLarge(stored: StoredResponse): boolean {
  return stored.headers[MARKER] !== undefined;
}

/** The error a retry with the key of such an answer gets: the request is not run again. */
export function tooLargeError(stored: StoredResponse, field: string): GatewayError {
  const limit = Number(stored.headers[MARKER]);
  const setting = `idempotency.${stored.headers[SETTING] ?? "max_record_bytes"}`;
  const original = stored.headers["x-mg-original-request-id"];
  return new GatewayError(
    422,
    "INVALID_REQUEST",
    `The answer to the first request with this idempotency key (${original ?? "unknown request id"}) was larger than ` +
      `${setting} (${limit} bytes), so it was sent but not kept and cannot be replayed; ` +
      "the request was not run again. Use a new key to run it again.",
    { details: { field, reason: "answer_too_large_to_replay", limit_bytes: limit, setting, ...(original ? { original_request_id: original } : {}) } },
  );
}
