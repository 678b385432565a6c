// The one bounded wait behind every "this may not take longer than ms" in the gateway: store calls, shutdown,
// MCP tool calls, the console build, kept translation state, closing Redis connections. No wait is unbounded, and
// no timer outlives the wait it bounds (a live timer would hold a shutting-down process open).
//
// A bound is judged only once the loop has read what is waiting for it. After a busy stretch of the event loop (a big
// body parsed, a GC pause, a saturated host) a due timer fires in the timers phase of the next turn, before that
// turn's poll phase reads the answer that came meanwhile (a socket, a worker's message, a finished fsync): a store
// that had answered was marked down, a request got 503. A timer never fires early, so the time it fired late is time
// the loop was held: the call gets it back, once (the poll reads what came; a call the busy loop could not even send
// is sent), and the verdict then waits for the check phase of its turn (setImmediate, after the poll).

/**
 * Calls `expire` once `ms` have passed, counted as above; the returned function cancels it (call it when the call
 * settles: `expire` never runs after). Still a bound on a loop that never idles: `expire` runs within about 2 × ms
 * plus twice the loop's longest busy stretch, and a moment after `ms` on a loop that is free. A clock that does not
 * run on its own (a test's fake timers) fires on time: judged at once.
 */
export function afterBound(ms: number, expire: () => void): () => void {
  let due = performance.now() + ms;
  let extended = false;
  let verdict: NodeJS.Immediate | undefined;
  const fired = () => {
    timer = undefined;
    const late = performance.now() - due;
    if (late <= 0) return expire();
    if (extended) {
      verdict = setImmediate(() => {
        verdict = undefined;
        expire();
      });
      return;
    }
    extended = true;
    const more = Math.min(late, ms);
    due = performance.now() + more;
    timer = setTimeout(fired, more);
  };
  let timer: NodeJS.Timeout | undefined = setTimeout(fired, ms);
  return () => {
    clearTimeout(timer);
    clearImmediate(verdict);
  };
}

/**
 * `p`'s outcome, or, when `ms` pass first (counted as afterBound does), what `onExpiry` returns (or throws). The timer
 * is cleared as soon as either settles; `p` itself is not cancelled and finishes, or fails, on its own. `onExpiry`
 * never runs once `p` has settled.
 */
export function settleWithin<T, E = never>(p: Promise<T>, ms: number, onExpiry: () => E): Promise<T | E> {
  // One promise settled by whichever comes first (no Promise.race and .finally: 4-5 store calls per request).
  return new Promise<T | E>((resolve, reject) => {
    let settled = false;
    const cancel = afterBound(ms, () => {
      if (settled) return;
      settled = true;
      try {
        resolve(onExpiry());
      } catch (err) {
        reject(err);
      }
    });
    p.then(
      (value) => {
        if (settled) return;
        settled = true;
        cancel();
        resolve(value);
      },
      (err) => {
        if (settled) return;
        settled = true;
        cancel();
        reject(err);
      },
    );
  });
}
