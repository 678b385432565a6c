// The bound on the answer a stream builds up: a Responses stream's final event carries the whole answer, and the
// gateway keeps it as it comes to build that event (a translated stream) or to end a cut one (the relay), so a stream
// is held to the same bound as a JSON answer (server.upstream_limits.answer_bytes). Without it an upstream that never
// stops (a broken or hostile one, a wrong base_url) grew one request's memory without end. The text is counted in
// characters as it comes (no encoding per event: the hot path stays as cheap), which is its size in bytes for ASCII.
import { GatewayError, DO_NOT_RETRY } from "../core/errors.ts";
import { ANSWER_TOO_LARGE } from "../core/retryable-status.ts";
import { LIMIT_SETTING, MAX_ANSWER_BYTES } from "./upstream-limits.ts";

/** The error a stream past the bound ends with: a JSON answer's (providers/http.ts answerTooLarge), told of a stream. */
export function streamTooLarge(provider: string, limit: number): GatewayError {
  const setting = LIMIT_SETTING.answer;
  return new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} streamed an answer larger than ${limit} bytes, the gateway's bound (${setting} raises it); the stream was cut there`, {
    retryable: false, headers: DO_NOT_RETRY, details: { provider, reason: ANSWER_TOO_LARGE, limit_bytes: limit, setting },
  });
}

export class AnswerBound {
  /** What has been counted so far. */
  get size(): number {
    return this.counted;
  }

  private counted = 0;

  constructor(private readonly provider: string, readonly limit: number = MAX_ANSWER_BYTES) {}

  /**
   * Counts `chars` more of the answer; throws answer_too_large once the whole is past the bound. Called before the
   * piece is kept or passed on, so nothing past the bound is.
   */
  add(chars: number): void {
    this.counted += chars;
    if (this.counted > this.limit) throw streamTooLarge(this.provider, this.limit);
  }
}
