// The hook through which a worker of `start --workers N` answers a scrape for the whole cluster (core/cluster.ts sets
// it once the worker has joined; core/observability/metrics-http.ts reads it). A module of its own so neither
// imports the other.

/** The whole cluster's metrics as Prometheus text; undefined in a single process or a worker still starting. */
export let clusterScrape: (() => Promise<string>) | undefined;

export function setClusterScrape(scrape: () => Promise<string>): void {
  clusterScrape = scrape;
}
