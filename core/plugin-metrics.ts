// The metrics plugins take through gateway.metrics.counter()/.gauge()/.histogram() (./metric-reuse.ts), and whose
// they are. A metric stays registered while a config that serves (or is still finishing its requests) has a plugin
// that took it in its setup: a reload that keeps the plugin keeps its counts; once the last such config is let go,
// the metric leaves /metrics (it stayed, frozen, until a restart, and a gauge's `collect` kept reading the torn-down
// plugin's state on every scrape). A `collect` that throws costs only its own metric on that scrape, logged naming
// the plugin; it made the whole /metrics a 500, every gateway metric lost to Prometheus. Each config's setup gives
// its own `collect`: when a config is let go (a refused reload's among them), the gauge goes back to the collect of
// the newest config still holding it, so it never reads a torn-down setup's state while the old config serves.
// At shutdown nothing leaves: the final scrape still has every plugin's counts; only the collects stop (freeze).
import { AsyncLocalStorage } from "node:async_hooks";
import type { Registry } from "prom-client";
import type { Logger } from "./log.ts";
import { registeredMetric, type Config, type Kind } from "./metric-reuse.ts";

/** Whose setup is running: the config it sets up (released as a whole), the plugin, and where to log its faults. */
export interface MetricTaker {
  owner: object;
  plugin: string;
  log: Pick<Logger, "warn">;
}

/** The gateway's own names (and prom-client's defaults): refused even before the gateway registers them lazily. */
const RESERVED_PREFIXES = ["gateway_", "process_", "nodejs_"];

interface Taken {
  metric: { collect?: unknown };
  /** The configs whose plugin took it, each with the `collect` its setup gave (newest last). */
  owners: Map<object, unknown>;
  /** Shut down: its collect no longer runs, the last value kept. */
  frozen?: boolean;
  /** Taken outside any setup (a plugin's handle, a test): never released. */
  kept: boolean;
  /** The plugin whose metric it is (the last to take it), named when its collect fails. */
  taker?: MetricTaker;
  /** The failure last logged, so a collect that keeps failing is logged once, not at every scrape. */
  failing?: string;
}

type Collected = { name: string; help: string; type: string; aggregator: string; values: unknown[] };

export class PluginMetrics {
  private readonly setups = new AsyncLocalStorage<MetricTaker>();
  private readonly taken = new Map<string, Taken>();
  /** Configs let go: a setup of theirs that finishes late (past its time bound) takes nothing and swaps no collect. */
  private readonly released = new WeakSet<object>();

  constructor(private readonly registry: Registry) {}

  /** Runs a plugin's setup: the metrics it takes while the config sets up (also after an await) are `taker.owner`'s. */
  setUp<T>(taker: MetricTaker, setup: () => T): T {
    return this.setups.run(taker, setup);
  }

  /**
   * The config's setups are over. On Node 20 an enabled AsyncLocalStorage slows every promise in the process (the
   * shipped gateway's CPU per request was 1.15-1.18x with it left on), so it is switched off until the next setup; a
   * metric a plugin takes later (from a timer its setup started, or a setup that ran past its bound) is kept for good.
   */
  setupsDone(): void {
    this.setups.disable();
  }

  /** The metric `config.name` for a plugin, refusing the gateway's own (./metric-reuse.ts). */
  take<M>(kind: Kind, config: Config): M {
    const reserved = RESERVED_PREFIXES.find((prefix) => config.name.startsWith(prefix));
    if (reserved) {
      throw new Error(`metric ${config.name}: the ${reserved} prefix is the gateway's own: a plugin's metric needs a name of its own, such as acme_...`);
    }
    const taker = this.setups.getStore();
    if (taker && this.released.has(taker.owner)) return this.late<M>(kind, config);
    // Taken outside any setup (a handle, a timer, a setup past its bound) while serving configs hold it: as registered,
    // their collect kept, and still theirs to release.
    if (!taker && this.taken.get(config.name)?.owners.size) return this.late<M>(kind, config);
    const metric = registeredMetric<M>(this.registry, kind, config, (name) => this.taken.has(name));
    let entry = this.taken.get(config.name);
    if (!entry) {
      entry = { metric: metric as Taken["metric"], owners: new Map(), kept: false };
      this.taken.set(config.name, entry);
      this.isolate(metric as object, entry);
    }
    if (taker) {
      entry.owners.delete(taker.owner); // re-added as the newest
      entry.owners.set(taker.owner, config.collect);
      entry.taker = taker;
    } else {
      entry.kept = true;
    }
    if (entry.frozen) entry.metric.collect = undefined;
    return metric;
  }

  /**
   * A setup of a config already let go: the metric as registered, its serving collect kept; or, if nothing serving has
   * it, one of the kind that is never registered (the late setup may use it; /metrics never shows it).
   */
  private late<M>(kind: Kind, config: Config): M {
    const entry = this.taken.get(config.name);
    if (!entry) return new kind({ ...config, registers: [] } as never) as M;
    const collect = entry.metric.collect;
    const metric = registeredMetric<M>(this.registry, kind, config, () => true);
    entry.metric.collect = collect;
    return metric;
  }

  /** The config `owner` no longer serves: the metrics no other serving config's plugin took leave the registry. */
  release(owner: object): void {
    this.released.add(owner);
    for (const [name, entry] of this.taken) {
      const collect = entry.owners.get(owner);
      if (!entry.owners.delete(owner)) continue;
      if (entry.owners.size === 0 && !entry.kept) {
        this.registry.removeSingleMetric(name);
        this.taken.delete(name);
        continue;
      }
      // Its collect reads the state the teardown closes: back to the newest remaining config's that gave one.
      if (!entry.frozen && collect && entry.metric.collect === collect) {
        const remaining = [...entry.owners.values()].filter(Boolean);
        entry.metric.collect = remaining[remaining.length - 1];
      }
    }
  }

  /**
   * The gateway shuts down with `owner` serving: its metrics stay for the final scrape (a counter's last counts
   * reach Prometheus), but their collects stop before the teardowns close what they read; a gauge keeps its last value.
   */
  freeze(owner: object): void {
    for (const entry of this.taken.values()) {
      if (!entry.owners.has(owner)) continue;
      entry.frozen = true;
      entry.metric.collect = undefined;
    }
  }

  /** A failure of this metric's collection answers it with no samples, logged, instead of failing the scrape. */
  private isolate(metric: object, entry: Taken): void {
    const m = metric as Record<string, unknown> & { name: string; help: string; type?: string; aggregator?: string };
    for (const method of ["get", "getForPromString"] as const) {
      const original = m[method] as (() => Promise<Collected>) | undefined;
      if (typeof original !== "function") continue;
      m[method] = async (): Promise<Collected> => {
        try {
          const collected = await original.call(metric);
          entry.failing = undefined;
          return collected;
        } catch (err) {
          const error = String(err);
          if (entry.failing !== error) {
            entry.failing = error;
            const plugin = entry.taker?.plugin ?? "a plugin";
            entry.taker?.log.warn(`plugin ${plugin} metric ${m.name} could not be collected; it is left out of this scrape`, { plugin, metric: m.name, error });
          }
          return { name: m.name, help: m.help, type: String(m.type), aggregator: m.aggregator ?? "sum", values: [] };
        }
      };
    }
  }
}
