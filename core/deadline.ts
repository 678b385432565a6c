// The one bounded wait behind every "this may not take longer than ms" in the gateway: store calls, shutdown,
// MCP tool calls, the console build, kept translation state, closing Redis connections. No wait is unbounded, and
// no timer outlives the wait it bounds (a live timer would hold a shutting-down process open).

/**
 * `p`'s outcome, or, when `ms` pass first, what `onExpiry` returns (or throws). The timer is cleared as soon as
 * either settles; `p` itself is not cancelled and finishes, or fails, on its own.
 */
export function settleWithin<T, E = never>(p: Promise<T>, ms: number, onExpiry: () => E): Promise<T | E> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<E>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(onExpiry());
      } catch (err) {
        reject(err);
      }
    }, ms);
  });
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}
