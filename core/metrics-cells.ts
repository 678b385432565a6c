// Per-request counting without prom-client's per-call work. A prom-client `inc(labels)` validates the label object,
// builds its hash string and returns a result object, on every call; a request made eleven such calls. Here a
// request adds to a plain number in a cell found by one string key, and the cells are folded into the real
// prom-client metric when it is collected (every scrape, and the cluster primary's aggregation), so /metrics reads
// exactly what it did before.
import type { Counter, Gauge } from "prom-client";

export interface Cell<L extends string> {
  readonly labels: Record<L, string>;
  pending: number;
}

/**
 * Sums for one prom-client counter, keyed by the caller's own key for the label values (their join). Call sites
 * write `(cells.get(key) ?? cells.open(key, { ...labels })).pending += n`: the label object is built once per key.
 */
export class CounterCells<L extends string> {
  private readonly cells = new Map<string, Cell<L>>();

  get(key: string): Cell<L> | undefined {
    return this.cells.get(key);
  }

  open(key: string, labels: Record<L, string>): Cell<L> {
    const c = { labels, pending: 0 };
    this.cells.set(key, c);
    return c;
  }

  /** Move the sums into the counter (its `collect` hook). */
  fold(counter: Counter<L>): void {
    for (const c of this.cells.values()) {
      if (c.pending === 0) continue;
      counter.inc(c.labels, c.pending);
      c.pending = 0;
    }
  }
}

/** Requests in flight per endpoint, counted in plain numbers and set on the gauge when it is collected. */
export class InFlightCells {
  private readonly counts = new Map<string, number>();

  enter(endpoint: string): void {
    this.counts.set(endpoint, (this.counts.get(endpoint) ?? 0) + 1);
  }

  leave(endpoint: string): void {
    this.counts.set(endpoint, (this.counts.get(endpoint) ?? 1) - 1);
  }

  fold(gauge: Gauge<"endpoint">): void {
    for (const [endpoint, n] of this.counts) gauge.set({ endpoint }, n);
  }
}
