// usage-metering: one ledger record per request that reached a provider, written durably before the response
// completes (JSON: before it is sent; streams: before the terminal event, or before the error event of a stream
// that fails). Stream usage comes from the stream itself (providers report it as it arrives); a client that leaves
// mid-stream is billed for what was relayed.
import { definePlugin } from "../../core/pipeline/define.ts";
import type { GatewayContext, Outcome } from "../../core/pipeline/context.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import { sentStatus, toGatewayError, type GatewayError } from "../../core/errors.ts";
import { shutdownCut } from "../../core/shutdown.ts";
import { dropUsageCounters, meterFor, usageCounters, type Meter } from "../../core/metering/meter.ts";
import { CAN_PUSH, PUSH, WRITE_HOLD, canPush, type EventSink, type PushControl, type PushableIterator, type WriteHold } from "../../core/sse/push.ts";
import { whenSettled, type PipelineFailure } from "../../core/pipeline/compose.ts";
import { cancelUnread } from "./unread.ts";
import { untilRead } from "./after-answer.ts";

const DONE: Promise<void> = Promise.resolve();

/** The event that ends a stream, in either protocol: the ledger is written before the client sees it. */
const isTerminal = (ev: SseEvent) => ev.data === "[DONE]" || ev.event === "message_stop";

/**
 * The stream as it passes: count content events, commit the ledger before the terminal event (or at the end).
 * A plain iterator rather than an async generator: one promise hop per event, on the streaming hot path; the step
 * handler is bound once per stream, not a closure per event (and a bound method, not a named arrow: under tsx's
 * keepNames a named closure gets its own `name` property, ~250 bytes and a defineProperty call).
 */
export function metered(events: AsyncIterable<SseEvent>, meter: Meter, status: number, ctx?: GatewayContext, watched = false): MeteredStream {
  return new MeteredStream(events, meter, status, ctx, watched);
}

/**
 * The metered stream a response carries; `read` once the writer (or a plugin's wrapper around it) began reading.
 * `watched`: a third-party plugin is in the pipeline, which may answer with something else and read this stream
 * after the answer (after-answer.ts).
 */
class MeteredStream implements AsyncIterable<SseEvent> {
  read = false;
  ended = false;
  cancelled: GatewayError | undefined;
  waiting: Promise<void> | undefined;
  onEnded: (() => void) | undefined;
  private reader: MeteredIterator | undefined;
  constructor(readonly events: AsyncIterable<SseEvent>, private readonly meter: Meter, private readonly status: number, private readonly ctx?: GatewayContext, private readonly watched = false) {}
  [Symbol.asyncIterator](): AsyncIterator<SseEvent> {
    if (this.cancelled) return failing(this.cancelled);
    this.read = true;
    return (this.reader = new MeteredIterator(this.events[Symbol.asyncIterator](), this.meter, this.status, this.ctx, this));
  }
  get source(): AsyncIterator<SseEvent> | undefined {
    return this.reader?.it;
  }
  get pulls(): number {
    return this.reader?.pulls ?? 0;
  }
  get pulling(): boolean {
    return this.reader !== undefined && this.reader.pulls !== this.reader.answers;
  }
  /** Its reading is over (its end, a failure, or its reader let go). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnded?.();
  }
  /**
   * Not the answer: a third-party plugin answered with something else and reads this stream itself. Its reader then
   * does not write the record; the request's end does, with the status the client got (after-answer.ts).
   */
  detached(): boolean {
    return this.watched && this.ctx!.response?.kind !== "stream";
  }
}

/** A reader's iterator over a stream the gateway cancelled: the error, never a clean end. */
const failing = (err: GatewayError): AsyncIterator<SseEvent> => ({
  next: () => Promise.reject(err),
  return: () => Promise.resolve({ done: true, value: undefined }),
});

class MeteredIterator implements AsyncIterator<SseEvent>, EventSink {
  private committed = false;
  /** Pulls asked and answered: after the answer, whether a plugin still reads it (after-answer.ts). */
  pulls = 0;
  answers = 0;
  private readonly step: (step: IteratorResult<SseEvent>) => IteratorResult<SseEvent> | Promise<IteratorResult<SseEvent>>;
  private readonly failedStep: (err: unknown) => Promise<never>;
  // Pushed (core/sse/push.ts): where events go, and the source's control (paused while the ledger commits).
  private sink: EventSink | undefined;
  private control: PushControl | undefined;
  private terminal: SseEvent | undefined;
  private endAfterTerminal = false;
  /** The writer's hold, offered by the writer (core/sse/push.ts WRITE_HOLD). */
  private writeHold: WriteHold | undefined;
  /** `ctx`: the request's, to tell whether the response has started and whether the client left. */
  constructor(readonly it: AsyncIterator<SseEvent>, private readonly meter: Meter, private readonly status: number, private readonly ctx: GatewayContext | undefined, private readonly src: MeteredStream) {
    this.step = this.onStep.bind(this);
    this.failedStep = this.onFailedStep.bind(this);
  }
  private commit(outcome: Outcome = { status: this.status, aborted: false }): Promise<void> {
    this.committed = true;
    // Its end first: a record waiting for it (after-answer.ts) goes ahead now, and this commit joins it.
    this.src.end();
    return this.src.detached() ? DONE : this.meter.commit(outcome);
  }
  /**
   * What to record now for a source that failed: a stream error (a shutdown's cut included), written before the
   * error event ends the response. Undefined when the record is written already, when the response has not started,
   * or when the client left (the request's end records that as aborted).
   */
  private failure(err: unknown): Outcome | undefined {
    // Before the response starts the writer answers with a plain error response, whose status the request's end
    // records. (Only the writer knows: a translator outside this wrapper may still hold the first events back.)
    const ctx = this.ctx;
    if (this.committed || !ctx?.responseStarted) return undefined;
    const cut = shutdownCut(ctx.signal);
    if (ctx.signal.aborted && !cut) return undefined;
    return { status: this.status, aborted: false, streamError: cut ?? toGatewayError(err) };
  }
  /** Pulled: the source failed. The record first, then the error goes on to the writer. */
  private onFailedStep(err: unknown): Promise<never> {
    this.answers++;
    if (this.src.cancelled) err = this.src.cancelled;
    this.src.end();
    const outcome = this.failure(err);
    const rethrow = (): never => {
      throw err;
    };
    return outcome ? this.commit(outcome).then(rethrow, rethrow) : Promise.reject(err);
  }
  private onStep(step: IteratorResult<SseEvent>): IteratorResult<SseEvent> | Promise<IteratorResult<SseEvent>> {
    this.answers++;
    if (step.done) {
      // Cut by the gateway for going unread (unread.ts): an error, not a short stream that looks complete.
      if (this.src.cancelled) return Promise.reject(this.src.cancelled);
      return this.committed ? step : this.commitHeld(step);
    }
    if (this.committed) return step;
    if (isTerminal(step.value)) return this.commitHeld(step);
    this.meter.relayed(step.value);
    return step;
  }
  /** Pulled: the ledger first, with the writer held, so the frames it has not written yet leave with `step`. */
  private commitHeld(step: IteratorResult<SseEvent>): Promise<IteratorResult<SseEvent>> {
    const h = this.writeHold;
    if (!h) return this.commit().then(() => step);
    h.hold();
    return this.commit().then(
      () => { h.release(); return step; },
      (err: unknown) => { h.release(); throw err; },
    );
  }
  [WRITE_HOLD](h: WriteHold): void {
    this.writeHold = h;
  }
  next(): Promise<IteratorResult<SseEvent>> {
    this.pulls++;
    // A reader still pulling after the gateway cancelled the stream: the error again, whatever the source says now.
    if (this.src.cancelled) return this.failedStep(this.src.cancelled);
    return this.it.next().then(this.step, this.failedStep);
  }
  return(value?: unknown): Promise<IteratorResult<SseEvent>> {
    this.src.end();
    return this.it.return ? this.it.return(value) : Promise.resolve({ done: true, value: undefined });
  }

  [CAN_PUSH](): boolean {
    return canPush(this.it);
  }
  [PUSH](sink: EventSink): PushControl {
    this.sink = sink;
    this.control = (this.it as PushableIterator)[PUSH](this);
    return this.control;
  }
  onEvent(ev: SseEvent): void {
    if (this.committed) return this.sink!.onEvent(ev);
    if (!isTerminal(ev)) {
      this.meter.relayed(ev);
      return this.sink!.onEvent(ev);
    }
    // The ledger first, then the terminal event: hold the source meanwhile, and the writer, so the frames already
    // handed to it leave with the terminal event.
    this.terminal = ev;
    this.control!.pause();
    this.writeHold?.hold();
    this.commit().then(this.afterTerminal.bind(this), this.commitFailed.bind(this));
  }
  private afterTerminal(): void {
    const ev = this.terminal!;
    this.terminal = undefined;
    this.sink!.onEvent(ev);
    this.writeHold?.release();
    if (this.endAfterTerminal) this.sink!.onEnd();
    else this.control!.resume();
  }
  private commitFailed(err: unknown): void {
    this.control!.cancel();
    this.writeHold?.release();
    this.sink!.onError(err);
  }
  onEnd(): void {
    // The source pauses while the terminal event waits for the ledger; should it end anyway, end after that event.
    if (this.terminal) {
      this.endAfterTerminal = true;
      return;
    }
    if (this.committed) return this.sink!.onEnd();
    this.commit().then(this.sink!.onEnd.bind(this.sink), this.onError.bind(this));
  }
  onError(err: unknown): void {
    this.src.end();
    const outcome = this.failure(err);
    if (!outcome) return this.sink!.onError(err);
    // The record first, with the writer held: the frames it has not written yet leave with the error event.
    this.writeHold?.hold();
    const pass = () => {
      this.writeHold?.release();
      this.sink!.onError(err);
    };
    this.commit(outcome).then(pass, pass);
  }
}

export default definePlugin({
  name: "usage-metering",
  dependsOn: ["auth"],
  setup(gateway, _options, config) {
    if (config.metrics.projectLabels) usageCounters(gateway.metrics.registry);
    else dropUsageCounters(gateway.metrics.registry);
  },
  async handle(ctx: GatewayContext, next) {
    // count_tokens is never billed: no ledger record.
    if (!ctx.auth || ctx.body === undefined || ctx.endpoint === "count_tokens") return next();
    const meter = meterFor(ctx);
    let stream: MeteredStream | undefined;
    ctx.onFinish((outcome) => {
      // The request's end: a stream the answer did not relay is cancelled now when only the gateway's own steps could
      // have read it, else once it goes unread after a grace (after-answer.ts; the record may wait for it).
      if (stream) deferred ? untilRead(ctx, stream) : stream.read || cancelUnread(ctx, stream);
      return meter.commit(outcome);
    });
    // A third-party plugin may still fail or replace the answer once this step has returned: the record then waits
    // for the whole pipeline (still before the answer is sent), so it carries the status the client gets.
    const deferred = whenSettled(ctx, recordSettled);
    try {
      await next();
    } catch (e) {
      await commitFailure(ctx, meter, e);
      throw e;
    }
    const r = ctx.response;
    if (!r) return;
    if (r.kind !== "stream") {
      if (!deferred) await meter.commit({ status: r.status, aborted: false });
      return;
    }
    ctx.response = { ...r, events: (stream = metered(r.events, meter, r.status, ctx, deferred)) };
    if (deferred) {
      (ctx as Metered)[STREAM] = stream;
      // The answer sent, a stream it did not relay may still be read (after-answer.ts): the record waits for it.
      const s = stream;
      meter.holdRecord(() => (ctx.responseStarted ? untilRead(ctx, s) : undefined));
    }
  },
});

/** The metered stream of a request whose pipeline has a third-party plugin, for recordSettled. */
const STREAM = Symbol("usage-metering stream");
type Metered = GatewayContext & { [STREAM]?: MeteredStream };

/** The whole pipeline settled (a third-party plugin in it): record how, unless recorded already. */
function recordSettled(ctx: GatewayContext, failure: PipelineFailure): Promise<void> | undefined {
  const meter = meterFor(ctx);
  return failure ? commitFailure(ctx, meter, failure.error) : commitAnswer(ctx, meter);
}

/** The request failed: recorded before its error is sent (a later commit, the request's end included, is a no-op). */
function commitFailure(ctx: GatewayContext, meter: Meter, e: unknown): Promise<void> {
  const err = toGatewayError(e, ctx.signal);
  // A shutdown's cut is the gateway's 503 (an error), not a client that left.
  return meter.commit({ status: sentStatus(ctx.protocol, err), error: err, aborted: ctx.signal.aborted && !shutdownCut(ctx.signal) });
}

/**
 * The pipeline answered: an answer other than a stream is recorded before it is sent; a stream as it ends. A plugin's
 * answer that replaced the upstream's stream before it was read to its end is recorded at the request's end instead:
 * the plugin may read that stream after the answer, and its usage comes at its end (after-answer.ts).
 */
function commitAnswer(ctx: GatewayContext, meter: Meter): Promise<void> | undefined {
  const r = ctx.response;
  if (!r || r.kind === "stream") return undefined;
  const left = (ctx as Metered)[STREAM];
  return left && !left.ended ? undefined : meter.commit({ status: r.status, aborted: false });
}
