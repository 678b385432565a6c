// The upstream timeout (a provider's timeout_ms: time to the response headers, then the longest silence between body
// chunks) on the gateway's own clock. undici's headersTimeout/bodyTimeout run on its coarse timers (a tick every
// ~0.5 s), which fire from ~0.5 s early to ~1 s late: a BYOK bound of 500 ms ended attempts at ~1000 ms, 2000 ms at
// ~2500 ms. They stay set (a second later, providers/http.ts), as a backstop.
//
// Cost: no timer per call and nothing per chunk. One shared interval runs while any call is watched and looks at each:
// a body is silent while undici's count of the bytes it pushed into it (which undici keeps anyway) stands still. A
// silence is counted from the first tick that saw the count move, so a timeout never fires before its bound and at
// most two ticks (plus event-loop lag) after it. A call found silent past its bound is looked at again after the
// poll phase of the same loop turn, and only then cut: after a busy stretch of the loop (a big body parsed, a GC
// pause, a saturated host) the tick runs before that turn's poll reads the bytes that came meanwhile, and healthy
// streams were cut. Measured (loaded 2-core machine, UpstreamClient alone, server in another process): JSON calls
// 38-41 µs of CPU before, 40-44 after, within run-to-run noise; 50-chunk streams no difference; one look costs ~60 ns
// per open call (10,000 open streams: ~3 % of a core at 50 looks a second).
import type { Readable } from "node:stream";
import { performance } from "node:perf_hooks";
import { UpstreamCancel } from "../core/net/request-abort.ts";

/** How often the watched calls are looked at (ms): the timeout's accuracy is twice this. */
export const WATCH_TICK_MS = 20;

type Parent = AbortSignal | UpstreamCancel;

const watching = new Set<UpstreamWatch>();
let ticker: NodeJS.Timeout | undefined;

/**
 * What undici is handed as one call's `signal`: aborted with the request's own abort (the client left, a shutdown),
 * or with `expired(phase, timeoutMs, arg)` once the call has been silent for `timeoutMs` (a shared function and its
 * argument, not a closure per call).
 */
export class UpstreamWatch extends UpstreamCancel {
  private body: Readable | undefined;
  /** The body's byte count at the last look; -1 before the first. */
  private seen = -1;
  /** When the current silence began: the send, then the tick that last saw bytes come. */
  private quietSince = performance.now();
  private readonly onParentAbort = () => this.fire(this.parent.reason);
  private readonly onClose = () => this.stop();

  constructor(
    private readonly parent: Parent, private readonly timeoutMs: number,
    private readonly expired: (phase: "headers" | "body", timeoutMs: number, arg: string) => Error, private readonly arg: string,
  ) {
    super();
    if (parent.aborted) {
      this.fire(parent.reason);
      return;
    }
    if ("addEventListener" in parent) parent.addEventListener("abort", this.onParentAbort, { once: true });
    else parent.on("abort", this.onParentAbort);
    watching.add(this);
    ticker ??= setInterval(tick, WATCH_TICK_MS).unref();
  }

  /** The response headers came: from now on the body's silences are timed. */
  watchBody(body: Readable): void {
    if (bytesRead(body) === undefined) return this.stop(); // an undici that keeps no count: its own bodyTimeout alone
    this.body = body;
    // Let go at once: held until the next tick, every answer's body outlived young-generation GCs (+35 % CPU per call).
    body.on("close", this.onClose); // "once" would wrap it: a closed body emits nothing more
  }

  /** The call is over (failed before its headers): nothing more to time. */
  stop(): void {
    if (!watching.delete(this)) return;
    this.body = undefined;
    if ("removeEventListener" in this.parent) this.parent.removeEventListener("abort", this.onParentAbort);
    else this.parent.removeListener("abort", this.onParentAbort);
  }

  /** One look, at `now`: the call is over, still watched, or silent for its whole bound so far. */
  look(now: number): Look {
    if (this.aborted) return "over";
    const body = this.body;
    if (body) {
      if (body.destroyed || (body as unknown as { _readableState: { ended: boolean } })._readableState.ended) return "over";
      const n = bytesRead(body)!;
      // Bytes came, or some wait unread (the reader is the slow one, as undici's paused parser is not timed either).
      if (n !== this.seen || body.readableLength > 0) {
        this.seen = n;
        this.quietSince = now;
        return "watched";
      }
    }
    return now - this.quietSince < this.timeoutMs ? "watched" : "silent";
  }

  /** The call was silent past its bound: undici destroys it, or its body, with the error. */
  expire(): void {
    const phase = this.body ? "body" : "headers";
    this.stop();
    this.fire(this.expired(phase, this.timeoutMs, this.arg));
  }
}

type Look = "over" | "watched" | "silent";

function tick(): void {
  const now = performance.now();
  let silent: UpstreamWatch[] | undefined;
  for (const w of watching) {
    const look = w.look(now);
    if (look === "over") w.stop();
    else if (look === "silent") (silent ??= []).push(w);
  }
  if (silent) setImmediate(judge, silent);
  if (watching.size === 0 && ticker) {
    clearInterval(ticker);
    ticker = undefined;
  }
}

/** In the check phase, after this turn's poll has read what was waiting in the sockets: still silent, it ends. */
function judge(silent: UpstreamWatch[]): void {
  const now = performance.now();
  for (const w of silent) {
    if (!watching.has(w)) continue; // over meanwhile (its body closed, the client left)
    const look = w.look(now);
    if (look === "silent") w.expire();
    else if (look === "over") w.stop();
  }
}

/** How many calls are being timed (tests). */
export const watchedCalls = (): number => watching.size;

/**
 * undici's count of the bytes its response body was handed (BodyReadable's kBytesRead): undefined when this undici
 * keeps none (providers/upstream-watch.test.ts fails loudly then).
 */
let bytesKey: symbol | undefined;
export function bytesRead(body: Readable): number | undefined {
  bytesKey ??= Object.getOwnPropertySymbols(body).find((s) => s.description === "kBytesRead");
  const n = bytesKey ? (body as unknown as Record<symbol, unknown>)[bytesKey] : undefined;
  return typeof n === "number" ? n : undefined;
}
