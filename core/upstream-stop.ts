// A reader that gives up a committed stream while one of its reads still waits on the upstream (the guardrails after
// a block: plugins/guardrails/stream/arrived.ts takes what had arrived and leaves a pull pending). An async
// generator's return() queues behind that pull, so the upstream connection would stay open, the provider generating
// and billing, until its next chunk came or its timeout passed. Stopped here, the request's upstream calls in flight
// are cut at once (the request itself goes on: its refusal is still written) and the stream's attempt ends without a
// verdict on the endpoint: the cut is the gateway's, never an upstream failure.
import type { GatewayContext } from "./pipeline/context.ts";

/** The committed stream of a request's latest attempt, as dispatch registers it (core/dispatch.ts ObservedStream). */
export interface StoppableStream {
  /** Stop reading: a read waiting on the upstream ends now; nothing that follows is judged against the endpoint. */
  stopNow(): void;
}

const streams = new WeakMap<GatewayContext, StoppableStream>();

/** From dispatch, when a stream attempt is committed. */
export function committedStream(ctx: GatewayContext, stream: StoppableStream): void {
  streams.set(ctx, stream);
}

/** From a reader done with the request's stream while a read of it may still wait on the upstream. */
export function stopUpstream(ctx: GatewayContext): void {
  streams.get(ctx)?.stopNow();
}
