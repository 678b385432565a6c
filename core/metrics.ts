// Prometheus metrics, one registry per gateway (tests run several in one process).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { CounterConfiguration, GaugeConfiguration, HistogramConfiguration } from "prom-client";
import { PluginMetrics } from "./plugin-metrics.ts";
import { CellCounter, InFlightGauge } from "./metrics-cells.ts";
import { ScrapeWatch } from "./scrape-watch.ts";

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export class Metrics {
  readonly registry = new Registry();
  /** The scrapes answered: a shutdown keeps the listener for one more (core/shutdown.ts). */
  readonly scrapes = new ScrapeWatch();
  // requests, inFlight and tokens change on every request: plain cells, folded in when collected (metrics-cells.ts).
  readonly requests = new CellCounter({
    name: "gateway_requests_total",
    help: "Requests handled, by endpoint, public model, resolved provider and HTTP status code.",
    labelNames: ["endpoint", "model", "provider", "code"] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: "gateway_request_duration_seconds",
    help: "Total time from request received to last byte sent.",
    labelNames: ["endpoint", "model", "provider"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly ttfb = new Histogram({
    name: "gateway_time_to_first_byte_seconds",
    help: "Time from request received to the first response byte written to the client.",
    labelNames: ["endpoint", "model", "provider"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly upstream = new Histogram({
    name: "gateway_upstream_duration_seconds",
    help: "Time from sending the upstream request to its response headers (per attempt; a stream's, to its first event, observed when the stream ends).",
    labelNames: ["provider", "model", "outcome"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly inFlight = new InFlightGauge({
    name: "gateway_requests_in_flight",
    help: "Requests currently being handled.",
    registers: [this.registry],
  });
  readonly tokens = new CellCounter({
    name: "gateway_tokens_total",
    help: "Tokens billed, by direction (input, output, cache_read, cache_write), model and provider; sandbox traffic is left out, as in the ledger's usage.",
    labelNames: ["direction", "model", "provider"] as const,
    registers: [this.registry],
  });

  readonly connections = new Gauge({
    name: "gateway_connections_open",
    help: "Client connections open on the API port (server.max_connections caps them).",
    registers: [this.registry],
  });
  readonly connectionsDropped = new Counter({
    name: "gateway_connections_dropped_total",
    help: "Client connections closed unanswered because server.max_connections were open.",
    registers: [this.registry],
  });

  // Config reloads (file change, SIGHUP): a refused one leaves the previous config serving, so it is only seen here
  // and in the log (core/gateway.ts keeps the last one's reason).
  readonly configReloads = new Counter({
    name: "gateway_config_reloads_total",
    help: "Config reloads by result: ok (swapped in) or failed (refused; the previous config keeps serving).",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });
  readonly configLastReloadSuccess = new Gauge({
    name: "gateway_config_last_reload_success",
    help: "1 when the last config reload (or the start) succeeded, 0 when it was refused.",
    registers: [this.registry],
    aggregator: "min", // with --workers: 0 when any worker refused it
  });
  readonly configRestartPending = new Gauge({
    name: "gateway_config_restart_pending",
    help: "1 when the config in force changes a setting read only at start (listener, store, log, telemetry, metrics listener): it takes effect at the next restart.",
    registers: [this.registry],
    aggregator: "max", // with --workers: 1 when any worker waits for a restart
  });
  readonly configLastReloadTime = new Gauge({
    name: "gateway_config_last_reload_timestamp_seconds",
    help: "Unix time of the last config reload attempt (or the start).",
    registers: [this.registry],
    aggregator: "max",
  });

  constructor() {
    // Both results exist from the start, so increase() and alerts see the first failure.
    for (const result of ["ok", "failed"]) this.configReloads.inc({ result }, 0);
    this.configLastReloadSuccess.set(1);
    this.configRestartPending.set(0);
    this.configLastReloadTime.set(Date.now() / 1000);
    collectDefaultMetrics({ register: this.registry });
  }

  // For plugins: their setup runs again at every reload, so `new Counter({ registers: [registry] })` there fails the
  // second time ("already registered") and every reload after it is refused. These return the metric registered under
  // that name by an earlier setup (same kind and label names; a given `collect` replaces the old one), else register
  // it in this registry: the counts go on across reloads. Never one of the gateway's own. A metric no serving
  // config's plugin took leaves the registry (./plugin-metrics.ts).
  readonly plugins = new PluginMetrics(this.registry);

  /** The counter `config.name`: the one an earlier setup registered, or a new one. */
  counter<T extends string = string>(config: Omit<CounterConfiguration<T>, "registers">): Counter<T> {
    return this.plugins.take(Counter, config);
  }

  /** The gauge `config.name`: the one an earlier setup registered, or a new one. */
  gauge<T extends string = string>(config: Omit<GaugeConfiguration<T>, "registers">): Gauge<T> {
    return this.plugins.take(Gauge, config);
  }

  /** The histogram `config.name`: the one an earlier setup registered (its buckets), or a new one. */
  histogram<T extends string = string>(config: Omit<HistogramConfiguration<T>, "registers">): Histogram<T> {
    return this.plugins.take(Histogram, config);
  }
}
