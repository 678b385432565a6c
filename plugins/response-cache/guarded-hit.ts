// A hit made inside the guardrails (core/pipeline/answer-guard.ts), so that it is treated as the same request
// answered by the provider would be: their input rules first (a block refuses it, a flag is noted, moderation judges
// it), then their output rules and moderation over the kept answer (which may predate a rule). Its ledger record is
// written before the answer goes out, as every answer's is, and says what the guardrails did: a stream they cut is
// checked whole first, and sent as the events before the cut, then the protocol's error event, as on a miss.
import type { GatewayContext, GatewayResponse } from "../../core/pipeline/context.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import type { AnswerGuard } from "../../core/pipeline/answer-guard.ts";
import { meterFor } from "../../core/metering/meter.ts";
import { sentStatus, toGatewayError, type GatewayError } from "../../core/errors.ts";
import { shutdownCut } from "../../core/shutdown.ts";

export async function guardedHit(ctx: GatewayContext, guard: AnswerGuard, serve: () => void): Promise<void> {
  const meter = meterFor(ctx);
  let cut: GatewayError | undefined;
  try {
    await guard(async () => serve());
    const r = ctx.response;
    if (r?.kind === "stream") ({ response: ctx.response, cut } = await checkedWhole(ctx, r));
  } catch (e) {
    // Refused (a rule, the moderation, or an answer cut before its first event): recorded before the error is sent.
    const err = toGatewayError(e, ctx.signal);
    await meter.commit({ status: sentStatus(ctx.protocol, err), error: err, aborted: ctx.signal.aborted && !shutdownCut(ctx.signal) });
    throw e;
  }
  const status = ctx.response!.status;
  await meter.commit(cut ? { status, aborted: false, streamError: cut } : { status, aborted: false });
}

type Stream = Extract<GatewayResponse, { kind: "stream" }>;

/** The checked stream read to its end (it is in memory): its events, and the error that cut it, if one did. */
async function checkedWhole(ctx: GatewayContext, r: Stream): Promise<{ response: Stream; cut?: GatewayError }> {
  const events: SseEvent[] = [];
  try {
    for await (const ev of r.events) events.push(ev);
  } catch (e) {
    if (!events.length) throw e; // nothing to send before it: the refusal is the answer
    const cut = toGatewayError(e, ctx.signal);
    return { response: { ...r, events: replay(events, cut) }, cut };
  }
  return { response: { ...r, events: replay(events) } };
}

async function* replay(events: SseEvent[], cut?: GatewayError): AsyncGenerator<SseEvent> {
  yield* events;
  if (cut) throw cut;
}
