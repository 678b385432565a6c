// The running gateway: the current config snapshot (with its providers and composed pipeline), metrics and logs.
// A reload builds a new snapshot and swaps it in one assignment; requests keep the snapshot they started on.
import type { JoinedState, LoadedConfig } from "./config/loaded.ts";
import { resolveConfig } from "./config/resolve.ts";
import { ConfigError, formatProblem } from "./config/source.ts";
import { changeFields, diffConfigs, type ConfigChanges } from "./config/diff.ts";
import { Metrics } from "./metrics.ts";
import { seedConfigSeries, stopReseeding } from "./metrics-seed.ts";
import { createLogger, type Logger } from "./log.ts";
import { compose, type Handler, type ResolvedPlugin } from "./pipeline/compose.ts";
import { definePlugin } from "./pipeline/define.ts";
import type { ProviderDriver } from "./contracts/provider.ts";
import { createDriver, type DriverSettings } from "./contracts/builtins.ts";
import type { Translators } from "./contracts/translator.ts";
import type { GatewayHandle } from "./contracts/gateway.ts";
import type { ProviderConfig } from "./generated/types/gateway.ts";
import { runTerminal, validateStep } from "./endpoints/terminal.ts";
import { createStore, spoolDirOf } from "./store/index.ts";
import { storeSpoolTag } from "./store/spool-identity.ts";
import { GuardedStore, type SpooledRecord } from "./store/guard.ts";
import { Spool } from "./store/spool.ts";
import { SplitLedgerStore } from "./store/ledger-split.ts";
import type { LedgerReader } from "./contracts/ledger-reader.ts";
import { InFlight } from "./shutdown.ts";
import { ApiKeys, DEFAULT_KEY_REFRESH_MS } from "./keys/api-keys.ts";
import { restartPending } from "./config/restart-only.ts";
import { apiKeyIdClashes } from "./keys/id-clash.ts";
import { droppedEveryProject } from "./config/reload-guard.ts";
import { describeEgress } from "./net/egress-proxy.ts";
import { PluginSetupError } from "./pipeline/setup-error.ts";
import { PLUGIN_SETUP_TIMEOUT_MS, settleWithin } from "./pipeline/setup-bound.ts";
import { PLUGIN_TEARDOWN_TIMEOUT_MS, tearDownPlugin, tearDownPlugins } from "./pipeline/teardown-bound.ts";

export interface Snapshot {
  readonly config: LoadedConfig;
  readonly drivers: Map<string, ProviderDriver>;
  readonly run: Handler;
  readonly plugins: ResolvedPlugin[];
  inflight: number;
  retired: boolean;
}

/** What started a reload: the config watch, a SIGHUP (to this process, or to the cluster primary), or a caller. */
export type ReloadTrigger = "file" | "sighup" | "call";
export type ReloadOutcome = { ok: true; changes: ConfigChanges } | { ok: false; problems: string[] };

/** The outcome of the last reload, kept for operators (an admin or readiness view reads it here). */
export interface ReloadStatus {
  /** ISO time of the attempt. */
  at: string;
  trigger: ReloadTrigger;
  ok: boolean;
  /** Why it was refused (file:line:column: message, as `model-gateway check` prints them). */
  problems?: string[];
  /** What it changed, when it was swapped in. */
  changes?: ConfigChanges;
}

export interface GatewayOptions {
  logger?: Logger;
  /** Where `${VARS}` of gateway.yaml are read, at start and at every reload (default: process.env). */
  env?: Record<string, string | undefined>;
  /** The bound on a third-party plugin's setup (default PLUGIN_SETUP_TIMEOUT_MS; tests shorten it). */
  pluginSetupTimeoutMs?: number;
  /** How long a third-party plugin's teardown may take (PLUGIN_TEARDOWN_TIMEOUT_MS); shortened by tests. */
  pluginTeardownTimeoutMs?: number;
}

interface CachedDriver { key: string; driver: ProviderDriver; users: Set<Snapshot> }

export class Gateway implements GatewayHandle {
  readonly metrics = new Metrics();
  /** Requests being handled: a graceful shutdown waits for them, then cuts what is left. */
  readonly inflight = new InFlight();
  /**
   * Durable, shareable state (spend, rate windows, idempotency, ledger) from `store:`; fixed for the process. Every
   * call is bounded and a store that fails is reported (/readyz) and worked around (core/store/guard.ts).
   */
  store!: GuardedStore;
  /** API keys created through the admin API: every replica's cache of the store's keys (core/keys/api-keys.ts). */
  apiKeys!: ApiKeys;
  /** A graceful shutdown has begun (for /readyz, and dispatch starts no retry). */
  draining = false;
  readonly log: Logger;
  private readonly env?: Record<string, string | undefined>;
  private readonly pluginSetupTimeoutMs: number;
  private readonly pluginTeardownTimeoutMs: number;
  private current!: Snapshot;
  private lastReloadStatus?: ReloadStatus;
  /** Reloads started, and the latest of them that has installed its config or been refused. */
  private reloadsStarted = 0;
  private reloadSettled = 0;
  /** The config the process started with: settings read only at start stay as it has them until a restart. */
  private startedWith!: LoadedConfig;
  private pendingRestart: string[] = [];
  private readonly drivers = new Map<string, CachedDriver>();
  /** Each snapshot by its drivers (what a request's context holds of it), for the drivers BYOK attempts add. */
  private readonly snapshots = new WeakMap<Snapshot["drivers"], Snapshot>();
  /** Subsystems (stores, stats, ...) that need closing with the gateway. */
  private readonly closers: Array<() => Promise<void> | void> = [];
  /** Closers that run alongside the others and the store (closeAlongside). */
  private readonly alongside: Array<() => Promise<void>> = [];
  private readonly reloaded: Array<() => void> = [];
  private readonly refusals: Array<(status: ReloadStatus) => void> = [];

  private constructor(opts: GatewayOptions) {
    this.log = opts.logger ?? createLogger();
    this.env = opts.env;
    this.pluginSetupTimeoutMs = opts.pluginSetupTimeoutMs ?? PLUGIN_SETUP_TIMEOUT_MS;
    this.pluginTeardownTimeoutMs = opts.pluginTeardownTimeoutMs ?? PLUGIN_TEARDOWN_TIMEOUT_MS;
  }

  static async create(config: LoadedConfig, opts: GatewayOptions = {}): Promise<Gateway> {
    const gw = new Gateway(opts);
    const sc = config.store;
    const spoolDir = spoolDirOf(sc, config.dir);
    const inner = await createStore(sc, config.dir, config.file, {
      timeoutMs: sc.timeout_ms ?? 300,
      spoolDir,
      log: gw.log,
      defaulted: config.raw.store === undefined,
      verify: { integrity: sc.integrity_check ?? "quick", requirePersistence: sc.require_persistence ?? true, epochFile: `${spoolDir}/store-epochs.json` },
    });
    try {
      // Named for the store: another config's gateway may share this spool_dir and must not replay these records.
      const spool = await Spool.open<SpooledRecord>(spoolDir, "ledger", gw.log, storeSpoolTag(sc, config.dir));
      gw.store = new GuardedStore(inner, { config: () => (gw.current ?? { config }).config.store, log: gw.log, registry: gw.metrics.registry, spool, fallbackDir: config.dir });
      if (inner instanceof SplitLedgerStore) inner.registerMetrics(gw.metrics.registry);
    } catch (err) {
      await inner.close();
      throw err;
    }
    await gw.store.start();
    gw.apiKeys = new ApiKeys(gw.store.apiKeys, { refreshMs: () => gw.config.store.key_refresh_ms ?? DEFAULT_KEY_REFRESH_MS, log: gw.log });
    try {
      gw.startedWith = config; // before the build: a plugin's setup may read settings kept from the start
      gw.current = await gw.build(config);
      if (config.joined) gw.joinCluster(config.joined);
      await seedConfigSeries(gw.metrics, config, { log: gw.log }); // the series the config determines, at 0 (core/metrics-seed.ts)
      await gw.apiKeys.start();
      // A key id of gateway.yaml that an API-created key already has (the keys the store could give now).
      const clashes = apiKeyIdClashes(config, gw.apiKeys.all());
      if (clashes.length) throw new ConfigError(clashes);
    } catch (err) {
      stopReseeding(gw.metrics);
      if (gw.current) await gw.dispose(gw.current);
      await gw.apiKeys.close();
      await gw.store.close();
      throw err;
    }
    return gw;
  }

  /**
   * The usage ledger as the operator plane reads it (admin API, CLI): usage from rollups, request search, one record
   * with its attempts — whichever store holds the ledger (SQLite, Redis, Postgres). Reads are bounded and a failing
   * one is a 503 STORE_UNAVAILABLE; they never mark the store down.
   */
  get ledgerReader(): LedgerReader {
    return this.store;
  }

  get config(): LoadedConfig {
    return this.current.config;
  }

  get startConfig(): LoadedConfig {
    return this.startedWith;
  }

  /** Take the current snapshot for one request; pair with release(). */
  acquire(): Snapshot {
    const s = this.current;
    s.inflight++;
    return s;
  }

  release(s: Snapshot): void {
    s.inflight--;
    if (s.retired && s.inflight === 0) void this.dispose(s);
  }

  createDriver(name: string, pc: ProviderConfig): ProviderDriver {
    const config = this.current.config;
    return createDriver(config.builtins, name, pc, driverSettings(config.server));
  }

  byokDriver(drivers: Snapshot["drivers"], provider: string): ProviderDriver | undefined {
    const snapshot = this.snapshots.get(drivers);
    const pc = snapshot?.config.raw.providers?.[provider];
    return snapshot && pc ? this.sharedDriver(snapshot, provider, pc) : undefined;
  }

  get translators(): Translators {
    return this.current.config.builtins.translators;
  }

  onClose(fn: () => Promise<void> | void): void {
    this.closers.push(fn);
  }

  /**
   * Run `fn` as the gateway closes, alongside the other closers and the store's flush rather than before them: for
   * what needs none of them and must not hold them up (the span flush to a collector that may not answer). close()
   * returns once it has settled too.
   */
  closeAlongside(fn: () => Promise<void>): void {
    this.alongside.push(fn);
  }

  onReload(fn: () => void): void {
    this.reloaded.push(fn);
  }

  /** `fn` is told of every reload refused (a cluster worker tells the primary: core/cluster.ts). */
  onReloadRefused(fn: (status: ReloadStatus) => void): void {
    this.refusals.push(fn);
  }

  /** The last reload's outcome (undefined until the first reload): when, what started it, why it failed. */
  get lastReload(): ReloadStatus | undefined {
    return this.lastReloadStatus;
  }

  /**
   * Validate and swap in a new config; an invalid file is refused and the old config keeps serving. Reloads may
   * overlap (a SIGHUP during the watcher's reload): the one started last read the file last, so once it has settled
   * (installed or refused) an earlier one still setting up is dropped rather than install its older reading; and none
   * waits for another, so a plugin setup that never ends cannot hold later reloads back.
   */
  async reload(file = this.current.config.file, trigger: ReloadTrigger = "call"): Promise<ReloadOutcome> {
    const seq = ++this.reloadsStarted;
    const at = new Date();
    const refused = (problems: string[]) => {
      if (seq < this.reloadSettled) return superseded();
      this.reloadSettled = seq;
      this.log.error("config reload refused; still serving the previous config", { file, trigger, problems });
      this.noteReload({ at: at.toISOString(), trigger, ok: false, problems });
      for (const fn of this.refusals) fn(this.lastReloadStatus!);
      return { ok: false as const, problems };
    };
    const superseded = () => {
      this.log.info("config reload superseded: a later one read the file after it, and is in force or refused", { file, trigger });
      return { ok: false as const, problems: ["superseded by a later reload"] };
    };
    let next: LoadedConfig;
    try {
      // A provider disabled as before (its variable still unset) is not named again: only one whose state changed.
      const disabledBefore = this.current.config.disabledProviders;
      next = await resolveConfig(this.current.config.builtins, file, { env: this.env, onNotice: (m) => this.log.info(m), disabledBefore });
    } catch (err) {
      return refused(err instanceof ConfigError ? err.problems.map(formatProblem) : [(err as Error).message]);
    }
    const dropped = droppedEveryProject(this.current.config, next);
    if (dropped) return refused([dropped]);
    // A key id that an API-created key already has: the store's answer (bounded), else this replica's cached keys.
    const clashes = apiKeyIdClashes(next, (await this.apiKeys.list()).keys);
    if (clashes.length) return refused(clashes.map(formatProblem));
    let snapshot: Snapshot;
    try {
      snapshot = await this.build(next);
    } catch (err) {
      // A plugin's setup (or a driver) failed on the new config: refused like an invalid file, never a crash.
      return refused([`setting up the new config failed: ${(err as Error).message ?? String(err)}`]);
    }
    if (seq < this.reloadSettled) {
      void this.dispose(snapshot);
      return superseded();
    }
    this.reloadSettled = seq;
    const old = this.current;
    this.current = snapshot;
    old.retired = true;
    if (old.inflight === 0) void this.dispose(old);
    const changes = diffConfigs(old.config, next);
    const fields = changeFields(changes);
    this.log.info(Object.keys(fields).length ? "config reloaded" : "config reloaded: nothing changed", {
      file, trigger, changes: fields, models: next.models.size, providers: next.providers.size,
    });
    const egress = next.server.egressProxy;
    if (egress?.key !== old.config.server.egressProxy?.key) this.log.info("egress proxy changed", egress ? describeEgress(egress) : { https: "none: direct", http: "none: direct" });
    this.pendingRestart = restartPending(this.startedWith, next);
    this.metrics.configRestartPending.set(this.pendingRestart.length ? 1 : 0);
    if (this.pendingRestart.length) {
      this.log.warn("config reloaded, but these settings take effect only when the gateway restarts; until then it runs with the ones it started with", {
        file, trigger, settings: this.pendingRestart,
      });
    }
    this.noteReload({ at: at.toISOString(), trigger, ok: true, changes });
    void seedConfigSeries(this.metrics, next, { log: this.log }).catch((err) => this.log.warn("seeding the new config's metric series failed", { error: String(err) }));
    for (const fn of this.reloaded) {
      try {
        fn();
      } catch (err) {
        this.log.error("applying the reloaded config failed", { error: String((err as Error)?.message ?? err) });
      }
    }
    return { ok: true, changes };
  }

  /**
   * A cluster worker started in place of one that died (core/cluster.ts), before it serves: what the others' config
   * changes of the settings read only at start waits for a restart here too, and their last reload, when refused, is
   * this worker's as well (/readyz and GET /admin/v1/config answer as theirs do), logged with the line they logged
   * unless a reload of the file follows and says what it finds.
   */
  private joinCluster(joined: JoinedState): void {
    const config = this.current.config;
    this.pendingRestart = [...joined.restartPending];
    this.metrics.configRestartPending.set(this.pendingRestart.length ? 1 : 0);
    if (this.pendingRestart.length) {
      this.log.warn("started in place of a worker that died: the config changes these settings, which take effect only when the gateway restarts; until then this worker runs with the ones the gateway started with, as the others do", {
        file: config.file, settings: this.pendingRestart,
      });
    }
    const refused = joined.refused;
    if (!refused) return;
    // Not counted in gateway_config_reloads_total: the worker that refused it counted it.
    this.lastReloadStatus = { at: refused.at, trigger: refused.trigger, ok: false, problems: [...refused.problems] };
    this.metrics.configLastReloadSuccess.set(0);
    this.metrics.configLastReloadTime.set(Date.parse(refused.at) / 1000);
    if (!joined.reloadFollows) {
      this.log.error("config reload refused; still serving the previous config", { file: config.file, trigger: refused.trigger, problems: refused.problems, refusedBy: "the other workers, before this one started" });
    }
  }

  /** Settings the config on disk changes that take effect only at the next restart (core/config/restart-only.ts). */
  get restartPending(): readonly string[] {
    return this.pendingRestart;
  }

  /** The last reload was refused: the config on disk is not the one serving (for /readyz). */
  get reloadProblems(): string[] | undefined {
    const r = this.lastReloadStatus;
    return r && !r.ok ? r.problems : undefined;
  }

  private noteReload(status: ReloadStatus): void {
    this.lastReloadStatus = status;
    this.metrics.configReloads.inc({ result: status.ok ? "ok" : "failed" });
    this.metrics.configLastReloadSuccess.set(status.ok ? 1 : 0);
    this.metrics.configLastReloadTime.set(Date.parse(status.at) / 1000);
  }

  async close(): Promise<void> {
    stopReseeding(this.metrics); // its timer held this gateway's metrics and config until the next retires: day
    const alongside = Promise.all(this.alongside.splice(0).map((fn) => fn().catch(() => {})));
    try {
      this.current.retired = true;
      await this.dispose(this.current, { shuttingDown: true });
      for (const fn of this.closers.splice(0)) await fn();
      await this.apiKeys.close();
      await this.store.close();
    } finally {
      await alongside;
    }
  }

  private async build(config: LoadedConfig): Promise<Snapshot> {
    const drivers = new Map<string, ProviderDriver>();
    const plugins: ResolvedPlugin[] = [];
    const snapshot: Snapshot = { config, drivers, run: async () => {}, plugins, inflight: 0, retired: false };
    try {
      await this.setUp(snapshot, plugins);
    } catch (err) {
      this.metrics.plugins.setupsDone();
      // What this snapshot set up before the failure (plugins, fresh connection pools) is released now: it never serves.
      await this.dispose(snapshot);
      throw err;
    }
    this.metrics.plugins.setupsDone();
    // Body validation runs right after auth, so an unauthenticated caller learns nothing about the schema.
    const authAt = plugins.findIndex((p) => p.def.name === "auth");
    const validate = { def: definePlugin({ name: "validate", handle: validateStep }), instance: { name: "validate", options: undefined, state: undefined }, trusted: true };
    const steps = [...plugins];
    steps.splice(authAt + 1, 0, validate);
    (snapshot as { run: Handler }).run = compose(steps, runTerminal);
    return snapshot;
  }

  /** The snapshot's drivers and plugin setups, each added to it as it is made, so a failure can release them. */
  /**
   * The driver for a provider as `snapshot` configures it, used by it until it is disposed. Connection pools are
   * reused across reloads when a provider's settings (its timeouts, answer bounds and egress proxy included) did
   * not change.
   */
  private sharedDriver(snapshot: Snapshot, name: string, pc: ProviderConfig): ProviderDriver {
    const { config } = snapshot;
    const settings = driverSettings(config.server);
    const key = `${name}\n${JSON.stringify(pc)}\n${settings.timeoutMs}\n${settings.answerTimeoutMs}\n${JSON.stringify(settings.limits ?? {})}\n${settings.egress?.key ?? ""}`;
    let cached = this.drivers.get(key);
    if (!cached) {
      cached = { key, driver: createDriver(config.builtins, name, pc, settings), users: new Set() };
      this.drivers.set(key, cached);
    }
    cached.users.add(snapshot);
    return cached.driver;
  }

  private async setUp(snapshot: Snapshot, plugins: ResolvedPlugin[]): Promise<void> {
    const { config, drivers } = snapshot;
    this.snapshots.set(drivers, snapshot);
    for (const [name, pc] of config.providers) drivers.set(name, this.sharedDriver(snapshot, name, pc));
    for (const entry of config.pipeline) {
      let state: unknown;
      const trusted = entry.name in config.builtins.plugins;
      try {
        // The metrics it takes through gateway.metrics are this snapshot's, released with it (core/plugin-metrics.ts).
        const taker = { owner: snapshot, plugin: entry.name, log: this.log };
        // Only a third-party setup runs under the taker (an AsyncLocalStorage): a built-in takes no plugin metric.
        const run = () => entry.def.setup!(this, entry.options, config);
        const setup = entry.def.setup ? Promise.resolve(trusted ? run() : this.metrics.plugins.setUp(taker, run)) : undefined;
        // Bounded for third-party plugins (./pipeline/setup-bound.ts); a built-in's setup is the gateway's own work
        // (the budget's warm-up reads each project's spend, however long a large ledger takes).
        state = setup && !trusted ? await settleWithin(setup, this.pluginSetupTimeoutMs, (late) => this.tearDownLate(entry.def, entry.name, late)) : await setup;
      } catch (err) {
        throw new PluginSetupError(entry.name, err);
      }
      plugins.push({ def: entry.def, instance: { name: entry.name, options: entry.options, state }, trusted });
    }
  }

  /** A setup that finished after its bound had passed: its config was refused, so what it set up is released. */
  private tearDownLate(def: ResolvedPlugin["def"], name: string, state: unknown): void {
    this.log.warn(`plugin ${name} setup finished after its bound had passed; tearing it down`);
    void tearDownPlugin({ name, teardown: def.teardown && (() => def.teardown!(state)) }, this.log, this.pluginTeardownTimeoutMs);
  }

  private async dispose(s: Snapshot, { shuttingDown = false } = {}): Promise<void> {
    // Its plugins' metrics that no serving config's plugin took again leave /metrics first: a gauge's collect would
    // read the state the teardown is about to close. At shutdown they stay for the final scrape (the drain's counts
    // reach Prometheus); only their collects stop.
    if (shuttingDown) this.metrics.plugins.freeze(s);
    else this.metrics.plugins.release(s);
    // The third-party teardowns run together, bounded as a set (./pipeline/teardown-bound.ts): one that never settles
    // held a shutdown, and a reload's release of the old config's connections, for ever; one after another, N of them
    // held it N times the bound.
    const teardowns = s.plugins.map(({ def, instance, trusted }) => ({ name: def.name, teardown: def.teardown && (() => def.teardown!(instance.state)), trusted }));
    await tearDownPlugins(teardowns, this.log, this.pluginTeardownTimeoutMs);
    for (const [key, cached] of this.drivers) {
      cached.users.delete(s);
      if (cached.users.size === 0) {
        this.drivers.delete(key);
        await cached.driver.close?.().catch(() => {});
      }
    }
  }
}

/** What every provider driver takes from server settings. */
function driverSettings(server: { upstreamTimeoutMs: number; upstreamAnswerTimeoutMs: number; upstreamLimits?: DriverSettings["limits"]; egressProxy?: DriverSettings["egress"] }): DriverSettings {
  return { timeoutMs: server.upstreamTimeoutMs, answerTimeoutMs: server.upstreamAnswerTimeoutMs, limits: server.upstreamLimits, egress: server.egressProxy };
}
