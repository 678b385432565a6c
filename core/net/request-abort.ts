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
    if (!ls) return;
    for (const fn of ls) {
      try {
        fn();
      } catch {
        // undici's own listener only records the reason and aborts its request; nothing to report here
      }
    }
  }
}

const bySignal = new WeakMap<AbortSignal, RequestAbort>();

/** One request's abort: the controller (ctx.signal) and the cheap emitter for upstream calls, aborted together. */
export class RequestAbort {
  readonly controller = new AbortController();
  readonly upstream = new UpstreamCancel();
  /** Whose request this is (its project, once auth has run): what is shared out per project reads it. */
  owner?: () => string | undefined;
  private enders: Array<() => void> | undefined;
  private ended = false;

  constructor() {
    bySignal.set(this.controller.signal, this);
  }

  /** Runs `fn` once the request has ended (answered, its stream written, failed or cut); at once if it has. */
  onEnd(fn: () => void): void {
    if (this.ended) fn();
    else (this.enders ??= []).push(fn);
  }

  /** The request has ended: what it held for its life (media-URL bytes in flight) is let go. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    const fns = this.enders;
    this.enders = undefined;
    for (const fn of fns ?? []) {
      try {
        fn();
      } catch {
        // a release that throws must not keep the others from running
      }
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  abort(reason?: unknown): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort(reason);
    this.upstream.fire(this.controller.signal.reason);
  }
}

/**
 * What to hand undici for a call made under `signal`: the request's cheap emitter when the signal is a request's
 * own (RequestAbort), the signal itself otherwise (a sub-request's or a job's own controller).
 */
export function upstreamSignal(signal: AbortSignal): AbortSignal | UpstreamCancel {
  return bySignal.get(signal)?.upstream ?? signal;
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

/** The request whose signal this is, or undefined for a signal that is not a request's own (a job's, a test's). */
export function requestOf(signal: AbortSignal | undefined): RequestAbort | undefined {
  return signal && bySignal.get(signal);
}
