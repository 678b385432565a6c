// What plugins and core services see of the running gateway (the Gateway class in core/gateway.ts implements
// it). An interface of its own so that the context and plugin types need not import the class, which imports
// the endpoints, which import the context (an import cycle).
import type { RuntimeConfig } from "../config/runtime.ts";
import type { ProviderConfig } from "../generated/types/gateway.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import type { InFlight } from "../shutdown.ts";
import type { Store } from "../store/types.ts";
import type { ProviderDriver } from "./provider.ts";
import type { Translators } from "./translator.ts";
import type { ApiKeyDirectory } from "../keys/api-keys.ts";

/** A config snapshot held by a request or job: its drivers stay open until it is released. */
export interface SnapshotHold {
  readonly drivers: Map<string, ProviderDriver>;
}

export interface GatewayHandle {
  readonly metrics: Metrics;
  /** Requests being handled: a graceful shutdown waits for them, then cuts what is left. */
  readonly inflight: InFlight;
  /** A graceful shutdown has begun: requests in flight may finish, but no retry or fallback attempt starts. */
  readonly draining: boolean;
  /** Durable, shareable state (spend, rate windows, idempotency, ledger) from `store:`; fixed for the process. */
  readonly store: Store;
  readonly log: Logger;
  /** API keys created through the admin API (the store's, cached by every replica). */
  readonly apiKeys: ApiKeyDirectory;
  /** The current config snapshot. */
  readonly config: RuntimeConfig;
  /**
   * The config the process started with: settings read only at start (core/config/restart-only.ts: the log, where
   * assets are kept, the store, the listen address) are read from it, never from `config`, until a restart.
   */
  readonly startConfig: RuntimeConfig;
  /** Take the current snapshot (a reload cannot close its drivers meanwhile); pair with release(). */
  acquire(): SnapshotHold;
  release(snapshot: SnapshotHold): void;
  /** Run fn when the gateway closes (subsystems kept per gateway). */
  onClose(fn: () => Promise<void> | void): void;
  /** Run fn after each reload that swapped in a new config (subsystems that hold resources the config describes). */
  onReload(fn: () => void): void;
  /** A new driver for a provider's settings, from the built-in drivers this gateway was loaded with. */
  createDriver(name: string, config: ProviderConfig): ProviderDriver;
  /**
   * A driver for a provider the snapshot whose `drivers` these are has none for (enabled or not: a project's own key
   * may use it), built from that snapshot's provider block and upstream server settings. Shared by snapshots that
   * configure it alike and closed once none of them is held, as the snapshot's own drivers are; undefined when the
   * config names no such provider.
   */
  byokDriver(drivers: SnapshotHold["drivers"], provider: string): ProviderDriver | undefined;
  /** The built-in translators, (client protocol, upstream protocol) -> Translator. */
  readonly translators: Translators;
}
