// The `error` a failed Responses stream's response carries (response.failed), one choice for the three places that
// write one: the gateway ending a stream itself (core/http/responses-stream-end.ts), the native relay
// (providers/openai-compatible/responses-stream.ts) and the chat translator (providers/translate/responses-to-chat).
// The code is one of OpenAI's (ResponseError.code), chosen for what a client does with it: Codex CLI sends the request
// again, up to five times, for every code but a few it stops on, and of OpenAI's codes only `invalid_prompt` is one of
// those (context_length_exceeded, insufficient_quota, usage_not_included, cyber_policy, server_is_overloaded would tell
// it something false). So a failure no retry can change — a 4xx refusal (a guardrail block), or one the gateway marks
// x-should-retry: false on the other protocols (an answer past server.upstream_limits, a moderation that cannot be
// called as configured) — is `invalid_prompt`, and a 5xx's message then names the gateway's code; a rate limit is
// `rate_limit_exceeded`, any other fault `server_error`, which clients retry. An upstream's context overflow is
// `context_length_exceeded`, which is then true: Codex stops and compacts on it (core/context-overflow.ts).
import { GatewayError, saysDoNotRetry } from "../errors.ts";
import { isRetryableStatus } from "../retryable-status.ts";
import { CONTEXT_LENGTH_EXCEEDED, isContextOverflow } from "../context-overflow.ts";

export interface FailedResponseError {
  code: string;
  message: string;
}

export function failedResponseError(err: unknown): FailedResponseError {
  const e = err as { status?: unknown; message?: unknown } | null | undefined;
  const message = typeof e?.message === "string" ? e.message : "upstream failure";
  const status = typeof e?.status === "number" ? e.status : 500;
  const gateway = err instanceof GatewayError ? err : undefined;
  if (gateway !== undefined && isContextOverflow(gateway.details)) return { code: CONTEXT_LENGTH_EXCEEDED, message };
  const final = (gateway !== undefined && saysDoNotRetry(gateway)) || !isRetryableStatus(status);
  if (!final) return { code: status === 429 ? "rate_limit_exceeded" : "server_error", message };
  if (gateway === undefined || status < 500) return { code: "invalid_prompt", message };
  // `invalid_prompt` alone would read as the request's fault: the message says it is the gateway's failure, and final.
  const reason = typeof gateway.details?.reason === "string" ? ` ${gateway.details.reason}` : "";
  return { code: "invalid_prompt", message: `${message} (${gateway.code}${reason}; not retryable: the same request fails the same way)` };
}
