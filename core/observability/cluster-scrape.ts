// The hooks through which a worker of `start --workers N` answers for the whole cluster (core/cluster.ts sets them
// once the worker has joined): a scrape (core/observability/metrics-http.ts) and the console's live traffic
// (core/admin/traffic-sampler.ts). A module of its own so neither side imports the other.

/** The whole cluster's metrics as Prometheus text; undefined in a single process or a worker still starting. */
export let clusterScrape: (() => Promise<string>) | undefined;
/** Every worker's traffic reading (core/admin/traffic-sampler.ts, WireReading), gathered the same way. */
export let clusterReadings: (() => Promise<unknown[]>) | undefined;

const joinListeners = new Set<() => void>();

export function setClusterScrape(scrape: () => Promise<string>, readings: () => Promise<unknown[]>): void {
  clusterScrape = scrape;
  clusterReadings = readings;
  for (const fn of joinListeners) fn();
}

/** Calls `fn` when this process joins a cluster (the scrape is set); returns what unsubscribes it. */
export function onClusterJoin(fn: () => void): () => void {
  joinListeners.add(fn);
  return () => joinListeners.delete(fn);
}
