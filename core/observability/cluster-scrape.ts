// The hook through which a worker of `start --workers N` answers a scrape for the whole cluster (core/cluster.ts sets
// it once the worker has joined; core/observability/metrics-http.ts and the console's traffic sampler read it). A
// module of its own so neither imports the other.

/** The whole cluster's metrics as Prometheus text; undefined in a single process or a worker still starting. */
export let clusterScrape: (() => Promise<string>) | undefined;

const joinListeners = new Set<() => void>();

export function setClusterScrape(scrape: () => Promise<string>): void {
  clusterScrape = scrape;
  for (const fn of joinListeners) fn();
}

/** Calls `fn` when this process joins a cluster (the scrape is set); returns what unsubscribes it. */
export function onClusterJoin(fn: () => void): () => void {
  joinListeners.add(fn);
  return () => joinListeners.delete(fn);
}
