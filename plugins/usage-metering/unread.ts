// An upstream stream the answer never used: a plugin replaced the response, dropped the stream or failed after it
// came. Nothing will read it, so the upstream must not go on generating (and holding a connection) until its timeout.
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import { GatewayError } from "../../core/errors.ts";
import { UpstreamCancel, upstreamSignal } from "../../core/net/request-abort.ts";

const ignore = () => {};

/** Called once the request has ended (its answer is all sent, or its error): stop the stream's upstream call. */
export function cancelUnread(ctx: GatewayContext, events: AsyncIterable<SseEvent>): void {
  ctx.gateway.log.warn("the upstream's answer stream was not relayed (a plugin replaced the response, dropped the stream or failed after it came): its call is cancelled, and the request is billed at an estimate", { requestId: ctx.requestId });
  // Its own end first: the attempt is released without a verdict on the endpoint and the upstream body closed.
  try {
    void events[Symbol.asyncIterator]().return?.()?.catch(ignore);
  } catch {
    // a wrapper whose return() throws: the cut below still stops the upstream
  }
  // A wrapper between this step and the provider that never started (an async generator) cannot pass that end on:
  // the request's upstream calls are cut as when its client leaves (its answer is complete by now, so nothing else
  // it needs is cut), without marking the request itself aborted.
  const cancel = upstreamSignal(ctx.signal);
  if (cancel instanceof UpstreamCancel) cancel.fire(new GatewayError(499 as number, "CANCELLED", "The upstream's answer stream was not relayed"));
}
