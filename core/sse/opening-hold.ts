// The hold of a stream's opening events, shared by the stream relays. Events that only open a stream (a chat
// role-only chunk, Anthropic's message_start and pings, Responses' response.created / .in_progress / .queued,
// Converse's messageStart) say nothing of the answer: held until the answer begins, a stream that turns out empty or
// fails at once still fails before dispatch commits it, and falls back. The hold is bounded (OPENING_HOLD_MS): past
// it the held events go out without content and the rest passes as it comes, so a long prefill still gets the
// client its 200 and the upstream's pings in real time. The answer deadline (core/net/answer-deadline.ts) runs until
// the answer begins, past the hold too: an upstream that opens a stream and then only sends pings is cut when it
// expires (a client whose protocol has nothing to show for opening events, Gemini's, would otherwise wait for ever).
// A timer exists only while events are held; once the answer has begun, pulls and pushes go straight to the relay.
import type { SseEvent } from "./parse.ts";
import type { CallOptions } from "../contracts/provider.ts";
import { holdAnswerDeadline } from "../net/answer-deadline.ts";
import { CAN_PUSH, PUSH, canPush, type EventSink, type PushControl, type PushableIterator } from "./push.ts";

/**
 * Longest hold, ms. An empty stream ends right behind its opening events (a role chunk and [DONE] in one read, or
 * milliseconds apart): a second catches it. Longer would only delay the first byte of a slow-prefill answer, which
 * proxies and clients time (nginx's 60 s read timeout, Cloudflare's 100 s, undici's 300 s headersTimeout) and which
 * the upstream's pings are meant to keep alive.
 */
export const OPENING_HOLD_MS = 1000;

/** Set by the relay: `begun` once the answer has begun (content, or a finish or stop reason). */
export interface Opening {
  begun: boolean;
}

const EXPIRED = Symbol("opening hold expired");

/**
 * `events` (a relay that sets `opening.begun`) with the events before the answer held, for at most OPENING_HOLD_MS.
 * `body`: the upstream body whose answer deadline the hold takes over (released with the events).
 */
export function holdOpening(
  events: AsyncIterator<SseEvent>, opening: Opening, call: Pick<CallOptions, "reportFirstEvent">, body?: object,
): AsyncIterableIterator<SseEvent> {
  return new HeldStream(events, opening, call, body ? holdAnswerDeadline(body) : undefined);
}

class HeldStream implements AsyncIterableIterator<SseEvent>, PushableIterator {
  /** Events held; once released, those still to hand out (from `head`). */
  private held: SseEvent[] = [];
  private head = 0;
  private holding = true;
  /** A pull of the relay that was still waiting when the hold expired: the next pull's answer. */
  private pending: Promise<IteratorResult<SseEvent>> | undefined;
  private expiry: Promise<typeof EXPIRED> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private seen = false;

  constructor(
    private readonly inner: AsyncIterator<SseEvent>, private readonly opening: Opening,
    private readonly call: Pick<CallOptions, "reportFirstEvent">, private disarm: (() => void) | undefined,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<SseEvent>> {
    if (this.head < this.held.length) return Promise.resolve({ value: this.take(), done: false });
    if (this.holding) return this.hold();
    let p = this.pending;
    if (p) this.pending = undefined;
    else p = this.inner.next();
    // Released without an answer: the deadline stays until the answer begins (or the stream ends).
    return this.disarm ? p.then((r) => this.watchBegun(r), (err) => this.failed(err)) : p;
  }

  private watchBegun(r: IteratorResult<SseEvent>): IteratorResult<SseEvent> {
    if (r.done || this.opening.begun) this.endDeadline();
    return r;
  }

  private failed(err: unknown): never {
    this.endDeadline();
    throw err;
  }

  return(): Promise<IteratorResult<SseEvent>> {
    this.release(true);
    this.held = [];
    this.head = 0;
    return this.inner.return?.() ?? Promise.resolve({ value: undefined, done: true });
  }

  [CAN_PUSH](): boolean {
    return !this.holding && this.disarm === undefined && this.pending === undefined && this.head === this.held.length && canPush(this.inner);
  }

  [PUSH](sink: EventSink): PushControl {
    return (this.inner as PushableIterator)[PUSH](sink);
  }

  private async hold(): Promise<IteratorResult<SseEvent>> {
    for (;;) {
      const p = (this.pending ??= this.inner.next());
      let r: IteratorResult<SseEvent> | typeof EXPIRED;
      try {
        r = this.expiry ? await Promise.race([p, this.expiry]) : await p;
      } catch (err) {
        // Failed before the answer began: nothing held goes out (dispatch falls back, or the error follows them).
        this.pending = undefined;
        this.release(true);
        this.held = [];
        throw err;
      }
      if (r === EXPIRED) {
        // No answer yet, but the upstream is alive: the client gets what was held, then the rest as it comes.
        this.release(false);
        return { value: this.take(), done: false };
      }
      this.pending = undefined;
      if (!this.seen) {
        this.seen = true;
        this.call.reportFirstEvent?.();
      }
      if (r.done) {
        // The relay ended without an error (it raises an empty stream itself): whatever it sent goes out first.
        this.release(true);
        return this.head < this.held.length ? { value: this.take(), done: false } : r;
      }
      this.held.push(r.value);
      if (this.opening.begun) {
        this.release(true);
        return { value: this.take(), done: false };
      }
      this.expiry ??= new Promise((resolve) => {
        this.timer = setTimeout(resolve, OPENING_HOLD_MS, EXPIRED);
      });
    }
  }

  private take(): SseEvent {
    const ev = this.held[this.head++]!;
    if (this.head === this.held.length) {
      this.held = [];
      this.head = 0;
    }
    return ev;
  }

  /** Stops holding; `begun`: the answer began (or the stream is over), so the answer deadline ends too. */
  private release(begun: boolean): void {
    this.holding = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.expiry = undefined;
    if (begun) this.endDeadline();
  }

  private endDeadline(): void {
    this.disarm?.();
    this.disarm = undefined;
  }
}
