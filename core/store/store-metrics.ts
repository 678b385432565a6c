// Prometheus metrics of the store guard: is the store up, which calls failed, what was decided without it, and the
// ledger spool's depth and age.
import { Counter, Gauge, type Registry } from "prom-client";

export class StoreMetrics {
  readonly up: Gauge;
  readonly failures: Counter<"operation" | "reason">;
  readonly decisions: Counter<"policy" | "decision">;
  readonly spooled: Counter<"kept">;
  readonly replayed: Counter;
  readonly rejected: Counter;

  constructor(registry: Registry, spool: { size: number; oldestAt: number | undefined }, pendingReleases: () => number) {
    const registers = [registry];
    // Aggregators: how `start --workers N` adds the workers' values up (core/cluster.ts); counters and sums by default.
    this.up = new Gauge({ name: "gateway_store_up", help: "1 while the state store answers, 0 while it is unavailable (see /readyz).", registers, aggregator: "min" });
    this.failures = new Counter({
      name: "gateway_store_failures_total",
      help: "Store calls that failed or did not answer within store.timeout_ms, by operation and reason (timeout, error, down: not tried while unavailable).",
      labelNames: ["operation", "reason"] as const,
      registers,
    });
    this.decisions = new Counter({
      name: "gateway_store_unavailable_decisions_total",
      help: "Policy decisions taken while the store was unavailable (store.when_unavailable): allowed or refused on local accounting, or refused with 503 STORE_UNAVAILABLE.",
      labelNames: ["policy", "decision"] as const,
      registers,
    });
    this.spooled = new Counter({
      name: "gateway_ledger_spooled_total",
      help: "Ledger records the store could not take, kept in the local spool (kept=durable: fsync'd to disk; memory: the disk failed too).",
      labelNames: ["kept"] as const,
      registers,
    });
    this.replayed = new Counter({ name: "gateway_ledger_replayed_total", help: "Spooled ledger records written into the store once it answered again.", registers });
    this.rejected = new Counter({
      name: "gateway_ledger_rejected_total",
      help: "Ledger records no store can hold (a figure out of range; a write the store refuses every time while answering otherwise), set aside in rejected-ledger.jsonl in the spool directory instead of retried.",
      registers,
    });
    new Gauge({
      name: "gateway_ledger_spool_records",
      help: "Ledger records waiting in the local spool for the store.",
      registers,
      collect() { this.set(spool.size); },
    });
    new Gauge({
      name: "gateway_ledger_spool_oldest_age_seconds",
      help: "Age of the oldest record waiting in the local spool (0 when empty).",
      registers,
      aggregator: "max",
      collect() {
        const at = spool.oldestAt;
        this.set(at === undefined ? 0 : Math.max(0, (Date.now() - at) / 1000));
      },
    });
    new Gauge({
      name: "gateway_store_pending_releases",
      help: "Budget reservations and idempotency claims to give back once the store answers again.",
      registers,
      collect() { this.set(pendingReleases()); },
    });
  }
}
