// Per-request counting without prom-client's per-call work. A prom-client `inc(labels)` validates the label object,
// builds its hash string and returns a result object, on every call; a request made eleven such calls. Here a
// request adds to a plain number in a cell found by one string key, and the cells are folded into the real
// prom-client metric when it is collected (every scrape, and the cluster primary's aggregation), so /metrics reads
// exactly what it did before.
import { Counter, Gauge, type Registry } from "prom-client";

interface Cell {
  readonly labels: Record<string, string>;
  pending: number;
}

interface MetricConfig<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: Registry[];
}

/** A prom-client counter of up to four labels, added to through plain cells. */
export class CellCounter<L extends string> {
  readonly counter: Counter<L>;
  private readonly cells = new Map<string, Cell>();
  private readonly labelNames: readonly L[];
  /** The label sets seed() shows at 0, by cell key. */
  private seeded = new Map<string, Record<string, string>>();
  /** How many counts have been added, ever: a shutdown compares it with what the last scrape read (core/scrape-watch.ts). */
  added = 0;

  constructor(config: MetricConfig<L>) {
    this.labelNames = config.labelNames;
    this.counter = new Counter({ ...config, collect: (): void => this.fold() });
  }

  /**
   * Add `n` for these label values, given in `labelNames` order (positional: no array or object per call). A count
   * that is not a positive finite number is not added: the figures come from upstreams (usage, cost), and one
   * negative or NaN folded into prom-client would make every later scrape of /metrics fail.
   */
  add(n: number, v0: string, v1?: string, v2?: string, v3?: string): void {
    if (!(n > 0 && n < Infinity)) return;
    this.added++;
    let key = v0;
    if (v1 !== undefined) key += "\n" + v1;
    if (v2 !== undefined) key += "\n" + v2;
    if (v3 !== undefined) key += "\n" + v3;
    let c = this.cells.get(key);
    if (!c) {
      const values = [v0, v1, v2, v3];
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ""));
      this.cells.set(key, (c = { labels, pending: 0 }));
    }
    c.pending += n;
  }

  /**
   * Show these label sets (each in `labelNames` order) at 0 before their first count: a series born at its first
   * count loses that count to rate()/increase(), which see only changes between scrapes. Replaces the last call's
   * sets: one no longer named that was never counted goes from /metrics (a counted one stays, as any counter does).
   */
  seed(sets: readonly (readonly string[])[]): void {
    const next = new Map<string, Record<string, string>>();
    for (const values of sets) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ""));
      next.set(values.join("\n"), labels);
    }
    for (const [key, labels] of this.seeded) {
      if (!next.has(key) && !this.cells.has(key)) this.counter.remove(labels as Partial<Record<L, string>>);
    }
    for (const labels of next.values()) this.counter.inc(labels as Partial<Record<L, string>>, 0);
    this.seeded = next;
  }

  private fold(): void {
    for (const c of this.cells.values()) {
      if (!(c.pending > 0 && c.pending < Infinity)) continue;
      this.counter.inc(c.labels as Partial<Record<L, string>>, c.pending);
      c.pending = 0;
    }
  }
}

/** Requests in flight per endpoint, counted in plain numbers and set on the gauge when it is collected. */
export class InFlightGauge {
  readonly gauge: Gauge<"endpoint">;
  private readonly counts = new Map<string, number>();

  constructor(config: Omit<MetricConfig<"endpoint">, "labelNames">) {
    this.gauge = new Gauge({ ...config, labelNames: ["endpoint"], collect: (): void => this.fold() });
  }

  enter(endpoint: string): void {
    this.counts.set(endpoint, (this.counts.get(endpoint) ?? 0) + 1);
  }

  leave(endpoint: string): void {
    this.counts.set(endpoint, (this.counts.get(endpoint) ?? 1) - 1);
  }

  private fold(): void {
    for (const [endpoint, n] of this.counts) this.gauge.set({ endpoint }, n);
  }
}
