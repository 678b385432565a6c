// Leases that live as long as their holder: a store lease (a budget hold, an idempotency claim) has a fixed length so
// that a process that dies frees it, but a request may run longer than any fixed length (a stream is bounded only
// between chunks). One sweep per process renews every lease its live requests hold, in one batch: a timer per
// request would cost every request, this costs a Set add and delete. So only a dead process's leases expire.
//
// Use: `const r = new LeaseRenewal(everyMs, (items) => store.renewX(items))`; `r.add(item)` once the lease is taken,
// `r.delete(item)` once it is given back (or let `live` say it is over: the sweep drops it then). The lease must be
// longer than `everyMs` plus a store call's bound, so a renewal always lands before the lease would lapse.

export interface LeaseRenewalOptions<T> {
  /** Still held? Items that are not are dropped at the next sweep instead of renewed. */
  live?: (item: T) => boolean;
  /** A sweep that failed (the store down): the next one tries again. */
  onError?: (err: unknown) => void;
}

export class LeaseRenewal<T> {
  private readonly items = new Set<T>();
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(readonly everyMs: number, private readonly renew: (items: T[]) => Promise<void>, private readonly o: LeaseRenewalOptions<T> = {}) {}

  /** Renewed from the next sweep on, until deleted. */
  add(item: T): void {
    this.items.add(item);
    // The timer runs only while something is held, and never keeps the process alive.
    this.timer ??= setInterval(() => void this.sweep(), this.everyMs).unref();
  }

  /** No longer renewed. The timer stays until a sweep finds nothing held: no timer churn per request. */
  delete(item: T): void {
    this.items.delete(item);
  }

  get size(): number {
    return this.items.size;
  }

  /** Renew every live item now (the timer's work; one at a time: a slow store never gets two sweeps at once). */
  sweep(): Promise<void> {
    return (this.sweeping ??= this.run().finally(() => (this.sweeping = undefined)));
  }

  private async run(): Promise<void> {
    const live: T[] = [];
    for (const item of this.items) {
      if (!this.o.live || this.o.live(item)) live.push(item);
      else this.items.delete(item);
    }
    if (this.items.size === 0) this.stop();
    if (!live.length) return;
    try {
      await this.renew(live);
    } catch (err) {
      this.o.onError?.(err);
    }
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
