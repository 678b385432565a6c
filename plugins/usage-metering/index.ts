// usage-metering: one ledger record per request that reached a provider, written durably before the response
// completes (JSON: before it is sent; streams: before the terminal event). Stream usage comes from the stream
// itself (providers report it as it arrives); a client that leaves mid-stream is billed for what was relayed.
import { definePlugin } from "../../core/pipeline/define.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import { toGatewayError } from "../../core/errors.ts";
import { meterFor, usageCounters, type Meter } from "./meter.ts";

/** The event that ends a stream, in either protocol: the ledger is written before the client sees it. */
const isTerminal = (ev: SseEvent) => ev.data === "[DONE]" || ev.event === "message_stop";

async function* metered(events: AsyncIterable<SseEvent>, meter: Meter, status: number): AsyncGenerator<SseEvent> {
  let done = false;
  for await (const ev of events) {
    if (!done && isTerminal(ev)) {
      await meter.commit({ status, aborted: false });
      done = true;
    } else meter.events++;
    yield ev;
  }
  if (!done) await meter.commit({ status, aborted: false });
}

export default definePlugin({
  name: "usage-metering",
  dependsOn: ["auth"],
  setup(gateway) {
    usageCounters(gateway.metrics.registry);
  },
  async handle(ctx: GatewayContext, next) {
    if (!ctx.auth || ctx.body === undefined) return next();
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
