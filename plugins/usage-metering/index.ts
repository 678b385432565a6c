// usage-metering: one ledger record per request that reached a provider, written durably before the response
// completes (JSON: before it is sent; streams: before the terminal event). Stream usage comes from the stream
// itself (providers report it as it arrives); a client that leaves mid-stream is billed for what was relayed.
import { definePlugin } from "../../core/pipeline/define.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import { toGatewayError } from "../../core/errors.ts";
import { meterFor, usageCounters, type Meter } from "../../core/metering/meter.ts";

/** The event that ends a stream, in either protocol: the ledger is written before the client sees it. */
const isTerminal = (ev: SseEvent) => ev.data === "[DONE]" || ev.event === "message_stop";

/**
 * The stream as it passes: count content events, commit the ledger before the terminal event (or at the end).
 * A plain iterator rather than an async generator: one promise hop per event, on the streaming hot path; the step
 * handler is bound once per stream, not a closure per event (and a bound method, not a named arrow: under tsx's
 * keepNames a named closure gets its own `name` property, ~250 bytes and a defineProperty call).
 */
export function metered(events: AsyncIterable<SseEvent>, meter: Meter, status: number): AsyncIterable<SseEvent> {
  return { [Symbol.asyncIterator]: () => new MeteredIterator(events[Symbol.asyncIterator](), meter, status) };
}

class MeteredIterator implements AsyncIterator<SseEvent> {
  private committed = false;
  private readonly step: (step: IteratorResult<SseEvent>) => IteratorResult<SseEvent> | Promise<IteratorResult<SseEvent>>;
  constructor(private readonly it: AsyncIterator<SseEvent>, private readonly meter: Meter, private readonly status: number) {
    this.step = this.onStep.bind(this);
  }

  private commit(): Promise<void> {
    this.committed = true;
    return this.meter.commit({ status: this.status, aborted: false });
  }

  private onStep(step: IteratorResult<SseEvent>): IteratorResult<SseEvent> | Promise<IteratorResult<SseEvent>> {
    if (step.done) return this.committed ? step : this.commit().then(() => step);
    if (this.committed) return step;
    if (isTerminal(step.value)) return this.commit().then(() => step);
    this.meter.events++;
    return step;
  }

  next(): Promise<IteratorResult<SseEvent>> {
    return this.it.next().then(this.step);
  }

  return(value?: unknown): Promise<IteratorResult<SseEvent>> {
    return this.it.return ? this.it.return(value) : Promise.resolve({ done: true, value: undefined });
  }
}

export default definePlugin({
  name: "usage-metering",
  dependsOn: ["auth"],
  setup(gateway) {
    usageCounters(gateway.metrics.registry);
  },
  async handle(ctx: GatewayContext, next) {
    // count_tokens is never billed: no ledger record.
    if (!ctx.auth || ctx.body === undefined || ctx.endpoint === "count_tokens") return next();
    const meter = meterFor(ctx);
    ctx.onFinish((outcome) => meter.commit(outcome));
    try {
      await next();
    } catch (e) {
      const err = toGatewayError(e);
      await meter.commit({ status: err.status, error: err, aborted: ctx.signal.aborted });
      throw e;
    }
    const r = ctx.response;
    if (!r) return;
    if (r.kind === "stream") ctx.response = { ...r, events: metered(r.events, meter, r.status) };
    else await meter.commit({ status: r.status, aborted: false });
  },
});
