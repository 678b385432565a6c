// A plugin registers its metrics in setup, which runs again at every reload, on the same registry: `new Counter(...)`
// the second time threw "A metric with the name ... has already been registered", and every later reload was refused
// until a restart. registeredMetric returns the metric already registered under the name (same kind, same labels), so
// its counts go on across reloads as Prometheus expects, or registers it the first time. Only a metric taken through
// this way is handed back: a name the gateway's own metric has is refused, or the plugin would count into it.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export type Kind = typeof Counter | typeof Gauge | typeof Histogram;
export type Config = { name: string; labelNames?: readonly string[]; collect?: unknown };

const kindName = (m: object): string =>
  m instanceof Counter ? "counter" : m instanceof Gauge ? "gauge" : m instanceof Histogram ? "histogram" : "metric of another kind";

/**
 * The metric `config.name` names in `registry` when it is a `kind` with the same label names (its `collect`, if one is
 * given, replaced: the new setup's state is what it reads; its help and buckets are the first's); else a new one
 * registered there. A metric of that name of another kind or labels is an error naming both; one that was not taken
 * this way (`taken` says no: the gateway's own) is an error naming it.
 */
export function registeredMetric<M>(registry: Registry, kind: Kind, config: Config, taken: (name: string) => boolean = () => true): M {
  const existing = registry.getSingleMetric(config.name) as unknown as (Config & { sortedLabelNames?: string[] }) | undefined;
  if (!existing) return new kind({ ...config, registers: [registry] } as never) as M;
  if (!taken(config.name)) {
    throw new Error(`metric ${config.name} is the gateway's own (or was registered without gateway.metrics): a plugin's metric needs a name of its own, such as acme_...`);
  }
  const labels = [...(config.labelNames ?? [])].sort();
  const had = existing.sortedLabelNames ?? [];
  if (!(existing instanceof kind) || labels.join("\n") !== had.join("\n")) {
    const wanted = kindName(Object.create(kind.prototype) as object);
    throw new Error(`metric ${config.name} is already registered as a ${kindName(existing)} with labels [${had.join(", ")}], not as a ${wanted} with labels [${labels.join(", ")}]`);
  }
  if (config.collect) existing.collect = config.collect;
  return existing as M;
}
