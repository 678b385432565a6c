// An upstream stream the answer does not relay (a third-party plugin replaced the response with its own, or dropped
// the stream) may still be read by that plugin after the answer was sent: a background job, a tee to a store. Its
// usage arrives at its end, so the request's ledger record waits for that end and bills what the upstream reported,
// with the status the client got. Bounded: a stream nothing reads for UNREAD_GRACE_MS (none began, or its reader
// stopped pulling) is cancelled (unread.ts) and billed at an estimate; a pull still waiting on the upstream is bounded
// by the provider's own timeout; a reader still at it server.upstream_answer_timeout_ms after the request's end is cut
// there (the upstream's answer deadline bounds only a stream's first event: a slow reader would hold the budget's
// reservation and the record for ever); a shutdown's cut cancels it at once.
import type { GatewayContext } from "../../core/pipeline/context.ts";
import { UpstreamCancel, upstreamSignal } from "../../core/net/request-abort.ts";
import { answerMs, cancelUnread, UNREAD_GRACE_MS, type CancelReason, type LeftStream } from "./unread.ts";

/** The metered stream as this file sees it (index.ts MeteredStream). */
export interface AfterAnswerStream extends LeftStream {
  readonly read: boolean;
  readonly ended: boolean;
  /** Pulls asked of it, and whether one is still waiting on the upstream. */
  readonly pulls: number;
  readonly pulling: boolean;
  /** Called by end(), once, while something waits for it. */
  onEnded: (() => void) | undefined;
  /** The wait already begun (one per stream). */
  waiting: Promise<void> | undefined;
}

/**
 * Once the request has answered (and in a pipeline with a third-party plugin): what its record waits for, or undefined
 * when nothing — the stream was read to its end already, the answer relays it (the writer read it), or the request
 * was aborted (its upstream call is cut with it; an unread stream is cancelled at once).
 */
export function untilRead(ctx: GatewayContext, stream: AfterAnswerStream): Promise<void> | undefined {
  if (stream.ended || stream.cancelled) return undefined;
  if (ctx.signal.aborted) {
    if (!stream.read) cancelUnread(ctx, stream);
    return undefined;
  }
  if (stream.read && ctx.response?.kind === "stream") return undefined;
  return (stream.waiting ??= watch(ctx, stream));
}

/** Resolves when the stream's reading ends, or once it is cancelled for going unread. Never rejects. */
function watch(ctx: GatewayContext, stream: AfterAnswerStream): Promise<void> {
  return new Promise<void>((resolve) => {
    let pulls = stream.read ? stream.pulls : -1;
    const cut = upstreamSignal(ctx.signal);
    const done = () => {
      clearTimeout(timer);
      clearTimeout(deadline);
      stream.onEnded = undefined;
      if (cut instanceof UpstreamCancel) cut.removeListener("abort", onCut);
      else cut.removeEventListener("abort", onCut);
      resolve();
    };
    const giveUp = (why: CancelReason) => {
      done();
      cancelUnread(ctx, stream, why);
    };
    // Every grace: still read (a pull since the last look, or one waiting on the upstream), or cancelled.
    const look = () => {
      if (stream.read && (stream.pulling || stream.pulls !== pulls)) {
        pulls = stream.pulls;
        timer = setTimeout(look, UNREAD_GRACE_MS);
      } else giveUp("unread");
    };
    // A shutdown's cut (the request is still in flight while this waits): no more waiting.
    const onCut = () => giveUp("shutdown");
    let timer = setTimeout(look, UNREAD_GRACE_MS);
    const deadline = setTimeout(() => giveUp("deadline"), answerMs(ctx));
    stream.onEnded = done;
    if (cut instanceof UpstreamCancel) cut.on("abort", onCut);
    else cut.addEventListener("abort", onCut, { once: true });
  });
}
