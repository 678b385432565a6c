// A request's cancellation: the AbortSignal the pipeline and the drivers listen to, plus a plain emitter handed to
// undici instead of that signal. Given an AbortSignal, undici adds and removes an EventTarget listener on it for
// every upstream call, Node's slow event path: handing it this emitter took the full pipeline's CPU per request
// down 11 % (JSON) and 10 % (streams) in bench:load. undici takes any EventEmitter-like `signal` (`aborted`,
// `reason`, `on`, `once`, `removeListener`); this one is aborted together with the request's controller.

/** What undici is handed as `signal`: aborted only through RequestAbort.abort. */
export class UpstreamCancel {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;
  /** Fired along with this one: a request's emitter for its upstream calls (RequestAbort.calls). */
  linked: UpstreamCancel | undefined;

  on(_event: "abort", fn: () => void): this {
    (this.listeners ??= []).push(fn);
    return this;
  }

  once(event: "abort", fn: () => void): this {
    return this.on(event, fn); // abort happens once: every listener runs at most once anyway
  }

  removeListener(_event: "abort", fn: () => void): this {
    const ls = this.listeners;
    const i = ls ? ls.indexOf(fn) : -1;
    if (i >= 0) ls!.splice(i, 1);
    return this;
  }

  off(event: "abort", fn: () => void): this {
    return this.removeListener(event, fn);
  }

  /** Runs the listeners once; a throwing listener does not stop the others. */
  fire(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const ls = this.listeners;
    this.listeners = undefined;
    if (ls) {
      for (const fn of ls) {
        try {
          fn();
        } catch {
          // undici's own listener only records the reason and aborts its request; nothing to report here
        }
      }
    }
    this.linked?.fire(reason);
  }
}

const bySignal = new WeakMap<AbortSignal, RequestAbort>();

/** One request's abort: the controller (ctx.signal) and the cheap emitter for upstream calls, aborted together. */
export class RequestAbort {
  readonly controller = new AbortController();
  /** The request's own abort, cheaply (what waits for the client leaving listens here: core/pipeline/abandon.ts). */
  readonly upstream = new UpstreamCancel();
  /**
   * What the upstream calls in flight listen to: fired with `upstream`, or alone by cutCalls (a reader done with a
   * stream whose read still waits on the upstream), which leaves the request itself running. Made by the first call.
   */
  private calls: UpstreamCancel | undefined;

  constructor() {
    bySignal.set(this.controller.signal, this);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  abort(reason?: unknown): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort(reason);
    this.upstream.fire(this.controller.signal.reason);
  }

  /** The emitter an upstream call starting now is handed. */
  callSignal(): UpstreamCancel {
    if (this.upstream.aborted) return this.upstream;
    if (!this.calls) this.upstream.linked = this.calls = new UpstreamCancel();
    return this.calls;
  }

  /** Cut the upstream calls in flight with `reason`, not the request: a call made after this gets a fresh emitter. */
  cutCalls(reason: unknown): void {
    const calls = this.calls;
    this.calls = this.upstream.linked = undefined;
    calls?.fire(reason);
  }
}

/**
 * The cheap emitter of the request whose signal this is, fired when it is aborted (RequestAbort), the signal itself
 * otherwise (a sub-request's or a job's own controller).
 */
export function upstreamSignal(signal: AbortSignal): AbortSignal | UpstreamCancel {
  return bySignal.get(signal)?.upstream ?? signal;
}

/**
 * What to hand undici for a call made under `signal`: the request's emitter for its upstream calls (aborted with the
 * request, or cut alone: cutUpstreamCalls) when the signal is a request's own, the signal itself otherwise.
 */
export function upstreamCallSignal(signal: AbortSignal): AbortSignal | UpstreamCancel {
  return bySignal.get(signal)?.callSignal() ?? signal;
}

/**
 * Stop the upstream calls in flight for the request whose signal this is, leaving the request itself running (its
 * signal not aborted): a read waiting on one of them fails with `reason` at once. False when the signal is not a
 * request's own.
 */
export function cutUpstreamCalls(signal: AbortSignal, reason: unknown): boolean {
  const r = bySignal.get(signal);
  r?.cutCalls(reason);
  return Boolean(r);
}

/**
 * Abort the request whose signal this is (the pipeline cancelling what a misbehaving plugin left running); whoever
 * holds only `ctx.signal` has no controller. False when the signal is not a request's own.
 */
export function abortRequest(signal: AbortSignal | undefined, reason: unknown): boolean {
  const r = signal && bySignal.get(signal);
  r?.abort(reason);
  return Boolean(r);
}
