// An upstream stream the answer never relayed, cancelled: a plugin replaced the response, dropped the stream or failed
// after it came, and nothing read it (after-answer.ts gives a plugin that reads it after the answer a grace first).
// The upstream must not go on generating (and holding a connection) until its timeout.
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import { GatewayError } from "../../core/errors.ts";
import { UpstreamCancel, upstreamSignal } from "../../core/net/request-abort.ts";
import { ABANDON_AFTER_MS } from "../../core/pipeline/abandon.ts";

/** How long a stream the answer does not relay may go unread after the request's end before it is cancelled. */
export const UNREAD_GRACE_MS = ABANDON_AFTER_MS;

/** The metered stream as this file sees it (index.ts MeteredStream). */
export interface LeftStream {
  readonly events: AsyncIterable<SseEvent>;
  /** Set here: what a reader gets from then on, an error rather than a clean end. */
  cancelled: GatewayError | undefined;
  /** The upstream iterator a reader is using, if one began. */
  readonly source: AsyncIterator<SseEvent> | undefined;
  /** Its reading is over. */
  end(): void;
}

const ignore = () => {};

const GRACE = `${UNREAD_GRACE_MS / 1000} s`;

/**
 * Why the gateway cancels a stream the answer did not relay: the request ended and only the gateway's own steps could
 * have read it ("ended"); nothing read it for the grace after the request's end ("unread", after-answer.ts); a reader
 * was still at it server.upstream_answer_timeout_ms after the request's end ("deadline"); or the gateway is shutting
 * down ("shutdown").
 */
export type CancelReason = "ended" | "unread" | "deadline" | "shutdown";

/** What a reader of a stream the gateway cancelled gets: an error, never a clean (and so silently short) end. */
function cancelledError(why: CancelReason, ctx: GatewayContext): GatewayError {
  const because = {
    ended: "the answer did not relay it and nothing read it before the request ended",
    unread: `the answer did not relay it and nothing read it within ${GRACE} of the request's end`,
    deadline: `it was still being read ${answerMs(ctx)} ms after the request's end (server.upstream_answer_timeout_ms)`,
    shutdown: "the gateway is shutting down",
  }[why];
  return new GatewayError(499 as number, "CANCELLED", `The gateway cancelled this upstream stream: ${because} (docs/plugins.md)`, { retryable: false });
}

/** The log line's reason, for the operator. */
function warning(why: CancelReason, ctx: GatewayContext): string {
  const when = {
    ended: "was not relayed and the request ended without reading it",
    unread: `was not relayed and nothing read it within ${GRACE} of the request's end (a plugin replaced the response, dropped the stream or failed after it came)`,
    deadline: `was not relayed and a plugin was still reading it ${answerMs(ctx)} ms after the request's end (server.upstream_answer_timeout_ms)`,
    shutdown: "was not relayed and was still open after the request's end when the gateway shut down",
  }[why];
  return `the upstream's answer stream ${when}: its call is cancelled, and the request is billed at an estimate`;
}

/** How long after the request's end a plugin may go on reading a stream the answer did not relay (after-answer.ts). */
export const answerMs = (ctx: GatewayContext): number => ctx.config.server.upstreamAnswerTimeoutMs;

/**
 * Stop the stream's upstream call; whoever reads it from now on gets `cancelledError()`. `why`: see CancelReason
 * (all but "ended" come after the request's end, from after-answer.ts).
 */
export function cancelUnread(ctx: GatewayContext, stream: LeftStream, why: CancelReason = "ended"): void {
  if (stream.cancelled) return;
  stream.cancelled = cancelledError(why, ctx);
  ctx.gateway.log.warn(warning(why, ctx), { requestId: ctx.requestId });
  // Its own end first: the attempt is released without a verdict on the endpoint and the upstream body closed.
  try {
    void (stream.source ?? stream.events[Symbol.asyncIterator]()).return?.()?.catch(ignore);
  } catch {
    // a wrapper whose return() throws: the cut below still stops the upstream
  }
  // A wrapper between this step and the provider that never started (an async generator) cannot pass that end on:
  // the request's upstream calls are cut as when its client leaves (its answer is complete by now, so nothing else
  // it needs is cut), without marking the request itself aborted.
  const cancel = upstreamSignal(ctx.signal);
  if (cancel instanceof UpstreamCancel) cancel.fire(stream.cancelled);
  stream.end();
}
