// `start --workers N`: N gateway processes behind one port (node:cluster; the primary accepts connections and hands
// them to workers round-robin). The primary serves nothing itself: it forks the workers, forwards SIGHUP to them as
// a reload message, turns SIGTERM/SIGINT into one graceful shutdown of every worker, restarts a worker that dies
// on its own, and gathers every worker's metrics for the one that was scraped (so /metrics counts the whole
// cluster). It keeps the config texts the workers started with and last accepted, so a worker that replaces one that
// died joins the running gateway: the settings read only at start as the gateway started, everything else as the
// others serve it, with their restart_pending and their last reload's refusal (a file edited since is then reloaded
// like the others did). A replacement that cannot start is logged once as a missing worker; every worker's /readyz
// says how many listen. Rate limits, budgets and idempotency claims must be shared between the workers, so N > 1 needs the
// Redis store (the SQLite and memory stores keep rate windows, reservations and claims in one process's memory).
import cluster, { type Worker } from "node:cluster";
import { availableParallelism } from "node:os";
import type { Logger } from "./log.ts";
import type { RunningGateway } from "./server.ts";
import { newSigningSecret, WORKER_SECRET_ENV } from "./assets/secret.ts";
import { setClusterScrape } from "./observability/cluster-scrape.ts";
import { addReadings, wireReading, type WireReading } from "./admin/traffic-sampler.ts";
import type { ConfigTexts } from "./config/config-texts.ts";
import type { JoinedState } from "./config/loaded.ts";
import { setWorkerCount } from "./worker-count.ts";

/** `--workers` value: a positive integer, or `auto` (one per core). Throws with a message for anything else. */
export function parseWorkers(v: string | undefined): number {
  if (v === undefined) return 1;
  if (v === "auto") return availableParallelism();
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new Error(`--workers must be a whole number from 1 to 256, or auto (got ${v})`);
  return n;
}

/**
 * A worker's environment additions: the primary's signing secret (used when server.signing_secret is unset, so a
 * signed asset URL works on every worker behind the port; core/assets/secret.ts), and MALLOC_ARENA_MAX. glibc gives each thread that allocates its own malloc arena, up to eight per
 * core, and a worker's V8 and libuv threads each fill one: two arenas held 10 000 open streams over two workers in
 * ~30 MB less at peak (bench/README.md, round 8). An operator's own MALLOC_ARENA_MAX wins.
 */
export function workerEnv(signingSecret: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return { MG_WORKER: "1", MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX || "2", [WORKER_SECRET_ENV]: signingSecret };
}

/**
 * Why this store cannot serve `workers` processes, or undefined when it can. `defaulted`: the config has no store:
 * section (the SQLite file is the default), which the operator may not know they chose.
 */
export function storeRefusal(storeKind: string, workers: number, defaulted = false): string | undefined {
  if (workers <= 1 || storeKind === "redis") return undefined;
  const which = defaulted ? `with no store: section the config runs on the ${storeKind} store, which keeps` : `the ${storeKind} store keeps`;
  return `--workers ${workers} needs store: { kind: redis } — ${which} rate-limit windows, budget ` +
    `reservations and idempotency claims in one process's memory, so ${workers} processes would each enforce their own ` +
    `limits. Use --workers 1, or point the store at a Redis server (see "Several cores" in the README).`;
}

/** Messages between the primary and its workers (the `mg` field keeps them apart from anything else on the channel). */
type ToWorker =
  | { mg: "reload" } | { mg: "shutdown" } | { mg: "exit" }
  /** What a starting worker loads: none while the cluster starts (it reads the file), else the running gateway's. */
  | { mg: "carried"; carried?: CarriedConfig }
  /** How many of the cluster's workers listen now (for /readyz: core/worker-count.ts). */
  | { mg: "workers"; listening: number; configured: number }
  /** Send your metrics (prom-client's JSON form) for gathering `id`; with `traffic`, your traffic reading instead. */
  | { mg: "metrics-part"; id: number; traffic?: true }
  /** The whole cluster's metrics, as Prometheus text, for the scrape `id` this worker asked about; with `traffic`,
   * every worker's reading (`parts`), for the console's sampler to add up. */
  | { mg: "metrics-text"; id: number; text?: string; parts?: unknown[]; error?: string };
type ToPrimary =
  /** `texts`: the config it started on; `restartPending`: what of it waits for a restart. */
  | { mg: "listening"; url: string; port: number; metricsUrl?: string; texts?: ConfigTexts; restartPending?: string[] }
  /** A starting worker asks what to load. */
  | { mg: "carried?" }
  /** A reload swapped in this config. */
  | { mg: "config-accepted"; texts: ConfigTexts; restartPending: string[] }
  /** A reload was refused: the config accepted before serves on. */
  | { mg: "config-refused"; refused: Refusal }
  /** A worker started in place of one that died cannot start: why (it exits next). */
  | { mg: "start-failed"; reason: string }
  /** A scrape reached this worker: gather every worker's metrics (with `traffic`: every worker's traffic reading). */
  | { mg: "metrics-gather"; id: number; traffic?: true }
  | { mg: "metrics-part"; id: number; metrics?: unknown[]; error?: string };

/**
 * What a worker started in place of one that died loads: the texts the workers last accepted (file and includes, as
 * written), with the settings read only at start taken from the texts the cluster started with.
 */
export interface CarriedConfig {
  started: ConfigTexts;
  accepted: ConfigTexts;
  /** What the accepted config changes of the settings read only at start (the others' restart_pending). */
  restartPending: string[];
  /** The others' last reload, when refused since the accepted one: the new worker reports it as they do. */
  refused?: Refusal;
}

type Refusal = NonNullable<JoinedState["refused"]>;

/** How long the primary waits for the workers' metrics: a worker that does not answer by then is left out. */
const GATHER_MS = 3000;
/** How long a worker waits for the primary's answer to a scrape. */
const SCRAPE_MS = GATHER_MS + 2000;

export interface PrimaryOptions {
  workers: number;
  log: Logger;
  /** Once every worker listens (the first time): where they listen, and their process ids. */
  onReady(ready: { url: string; port: number; metricsUrl?: string; pids: number[] }): void;
}

/** A worker that died within this long after it started counts as a crash loop: its restart is delayed. */
const QUICK_DEATH_MS = 5000;

/**
 * Run the primary until it is shut down. Resolves with the exit code: 0 when every worker exited 0 after a shutdown,
 * 1 when startup failed (a worker exited before it listened: it printed why) or a worker failed its shutdown.
 */
export function runPrimary(o: PrimaryOptions): Promise<number> {
  const { log } = o;
  const started = new Map<Worker, number>();
  const listening = new Set<Worker>();
  // Workers a SIGHUP reached before they listened: each may have read the config before the edit the signal
  // announces, and takes no reload message until it listens, so it gets one then (one, however many signals came).
  const reloadOwed = new Set<Worker>();
  let ready = false;
  let stopping = false;
  let failed = false;
  let forced = false;
  let quickDeaths = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  let finish!: (code: number) => void;
  const done = new Promise<number>((r) => (finish = r));
  const signingSecret = newSigningSecret(); // one for every worker, restarted ones included
  // The config the first worker listened with, and the one a worker last accepted: in memory only (./config/config-texts.ts).
  let startedTexts: ConfigTexts | undefined;
  let acceptedTexts: ConfigTexts | undefined;
  let acceptedPending: string[] = [];
  /** The workers' last reload, when it was refused (cleared by an accepted one). */
  let refused: Refusal | undefined;
  /** Why a worker started in place of one that died could not start (it said so before exiting). */
  const startFailures = new Map<Worker, string>();
  /** The count serving and reason last logged for a replacement that could not start: said once while they stay the same. */
  let missingSince: string | undefined;
  /** Every listening worker hears how many listen (their /readyz shows it). */
  const tellCount = () => {
    for (const x of listening) sendTo(x, { mg: "workers", listening: listening.size, configured: o.workers });
  };

  const gatherer = new MetricsGatherer(() => [...listening], log);
  const fork = () => {
    const w = cluster.fork(workerEnv(signingSecret));
    started.set(w, Date.now());
    w.on("message", (m: ToPrimary) => {
      if (m?.mg === "metrics-gather") return gatherer.gather(w, m.id, m.traffic === true);
      if (m?.mg === "metrics-part") return gatherer.part(w, m);
      if (m?.mg === "config-accepted") {
        acceptedTexts = m.texts;
        acceptedPending = m.restartPending;
        refused = undefined;
        return;
      }
      if (m?.mg === "config-refused") return void (refused = m.refused);
      if (m?.mg === "start-failed") return void startFailures.set(w, m.reason);
      if (m?.mg === "carried?") {
        // Only once the cluster is up: until then every worker starts from the file, and a bad one stops the start.
        const carried = ready && startedTexts && acceptedTexts
          ? { started: startedTexts, accepted: acceptedTexts, restartPending: acceptedPending, ...(refused ? { refused } : {}) }
          : undefined;
        return sendTo(w, { mg: "carried", carried });
      }
      if (m?.mg !== "listening") return;
      if (!startedTexts) {
        startedTexts = m.texts;
        acceptedTexts = m.texts;
        acceptedPending = m.restartPending ?? [];
      }
      listening.add(w);
      tellCount();
      if (reloadOwed.delete(w) && w.isConnected()) {
        log.info("a reload asked for while it started: reloading this worker's config now", { worker: w.id, pid: w.process.pid });
        w.send({ mg: "reload" } satisfies ToWorker);
      }
      if (ready) {
        log.info("worker listening", { worker: w.id, pid: w.process.pid });
        if (missingSince !== undefined && listening.size === o.workers) {
          missingSince = undefined;
          log.info(`every worker listens again: the gateway runs with all ${o.workers} workers`, { workers: o.workers });
        }
      } else if (listening.size === o.workers) {
        ready = true;
        o.onReady({ url: m.url, port: m.port, metricsUrl: m.metricsUrl, pids: [...listening].map((x) => x.process.pid!) });
      }
    });
  };

  const shutdown = () => {
    stopping = true;
    clearTimeout(restartTimer);
    for (const w of Object.values(cluster.workers ?? {})) {
      if (!w) continue;
      // One still starting has no shutdown handler yet: its default SIGTERM action ends it (nothing in flight).
      if (listening.has(w) && w.isConnected()) w.send({ mg: "shutdown" } satisfies ToWorker);
      else w.process.kill("SIGTERM");
    }
    if (!Object.keys(cluster.workers ?? {}).length) finish(forced ? 130 : failed ? 1 : 0);
  };

  cluster.on("exit", (w, code, signal) => {
    gatherer.retire(w);
    const wasListening = listening.delete(w);
    reloadOwed.delete(w);
    const life = Date.now() - (started.get(w) ?? 0);
    started.delete(w);
    if (stopping) {
      // Workers killed before they listened don't count; a listening one must finish its shutdown cleanly.
      if (wasListening && code !== 0) {
        failed = true;
        log.error("worker failed its shutdown", { worker: w.id, pid: w.process.pid, code, signal });
      }
      if (!Object.keys(cluster.workers ?? {}).length) finish(forced ? 130 : failed ? 1 : 0);
      return;
    }
    if (!ready) {
      // The first start failed (bad port, store unreachable, ...): the worker said why; stop the others.
      failed = true;
      log.error("worker exited before it was listening; stopping", { worker: w.id, pid: w.process.pid, code, signal });
      shutdown();
      return;
    }
    quickDeaths = life < QUICK_DEATH_MS ? quickDeaths + 1 : 0;
    const delay = quickDeaths ? Math.min(30_000, 500 * 2 ** (quickDeaths - 1)) : 0;
    const failure = startFailures.get(w);
    startFailures.delete(w);
    tellCount();
    if (!wasListening && failure !== undefined) {
      // A worker started in place of one that died, on the config the others serve, could not start: the gateway
      // serves on with the others. Said once while the reason and the count serving stay the same (a second worker
      // lost to it is said: "1 of 3", not the last line's "2 of 3"); tried again with the same backoff.
      const said = `${listening.size} of ${o.workers}: ${failure}`;
      if (said !== missingSince) {
        log.error(`a worker started in place of one that died cannot start: the gateway keeps serving with ${listening.size} of ${o.workers} workers until it can (trying again, less and less often) or the gateway is restarted`, {
          worker: w.id, pid: w.process.pid, reason: failure, listening: listening.size, workers: o.workers, retryInMs: delay,
        });
      }
      missingSince = said;
    } else {
      log.error("worker died; starting a new one", { worker: w.id, pid: w.process.pid, code, signal, restartInMs: delay });
    }
    restartTimer = setTimeout(fork, delay);
  });

  // First signal: every worker runs its graceful shutdown (server.shutdown_grace_ms). A second: workers and primary
  // exit at once (130), as a single process does.
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.stderr.write(`${signal} again during shutdown: exiting now\n`);
      for (const w of Object.values(cluster.workers ?? {})) {
        if (w?.isConnected()) w.send({ mg: "exit" } satisfies ToWorker);
        else w?.process.kill("SIGKILL");
      }
      forced = true;
      setTimeout(() => finish(130), 2000).unref(); // workers that do not answer are cut by our exit
      return;
    }
    log.info("shutting down every worker", { signal, workers: Object.keys(cluster.workers ?? {}).length });
    shutdown();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  // A reload reaches every worker (each also watches the config file itself unless --no-watch).
  process.on("SIGHUP", () => {
    log.info("SIGHUP: reloading the config in every worker");
    for (const w of Object.values(cluster.workers ?? {})) {
      if (!w) continue;
      if (!listening.has(w)) reloadOwed.add(w);
      else if (w.isConnected()) w.send({ mg: "reload" } satisfies ToWorker);
    }
  });

  for (let i = 0; i < o.workers; i++) fork();
  return done;
}

/**
 * The primary's side of a scrape: ask every listening worker for its metrics, add them up (prom-client's
 * AggregatorRegistry, by each metric's `aggregator`: sums for counters and histograms, min/max where a metric says so)
 * and send the text to the worker that was scraped. A traffic gather (the console's sampler, every 10 s in every
 * worker) asks for each worker's traffic reading instead, a few hundred bytes, and hands the readings back: the asker
 * adds them up. None answering within GATHER_MS is an error the asker reports.
 *
 * Counters and histograms must never go down while the primary lives (Prometheus reads a drop as a reset, and
 * rate() spikes; the console's Live panel would show a step of 0 requests): a worker that does not answer in time
 * (paused, busy) is counted with its last answer, and a worker that dies has its last answer's counters and
 * histograms added to a retired total every later sum keeps (its gauges, and its requests in flight, are dropped).
 * Both gathers work so. Memory: one answer of each kind per live worker, one retired total of each.
 */
export class MetricsGatherer {
  private next = 0;
  private readonly open = new Map<number, { asker: Worker; askerId: number; traffic: boolean; waiting: Set<Worker>; answers: Map<Worker, unknown[]>; timer: NodeJS.Timeout }>();
  /** Each live worker's last answered metrics: what it counts for while it does not answer. */
  private readonly last = new Map<Worker, unknown[]>();
  /** The summed counters and histograms of the workers that died (prom-client's JSON form). */
  private retired: unknown[] | undefined;
  /** The same for traffic gathers: each live worker's last reading, and the dead workers' readings added up. */
  private readonly lastTraffic = new Map<Worker, unknown[]>();
  private retiredTraffic: WireReading | undefined;
  /** Folding a dead worker into `retired` (prom-client is loaded lazily); a gather's sum waits for it. */
  private folding: Promise<void> = Promise.resolve();
  constructor(private readonly workers: () => Worker[], private readonly log: Logger, private readonly waitMs = GATHER_MS) {}

  gather(asker: Worker, askerId: number, traffic = false): void {
    const id = this.next++;
    const waiting = new Set(this.workers().filter((w) => w.isConnected()));
    const g = { asker, askerId, traffic, waiting, answers: new Map<Worker, unknown[]>(), timer: setTimeout(() => void this.finish(id), this.waitMs) };
    this.open.set(id, g);
    for (const w of waiting) sendTo(w, traffic ? { mg: "metrics-part", id, traffic } : { mg: "metrics-part", id });
    if (!waiting.size) void this.finish(id);
  }

  part(from: Worker, m: { id: number; metrics?: unknown[]; error?: string }): void {
    const g = this.open.get(m.id);
    if (!g || !g.waiting.delete(from)) return; // late (given up on) or not asked
    if (m.metrics) {
      g.answers.set(from, m.metrics);
      (g.traffic ? this.lastTraffic : this.last).set(from, m.metrics);
    } else this.log.warn("a worker could not collect its metrics", { worker: from.id, error: m.error });
    if (!g.waiting.size) void this.finish(m.id);
  }

  /** A worker exited: its last answer's counters and histograms join the retired total; no gather waits for it. */
  retire(w: Worker): void {
    const part = this.last.get(w);
    this.last.delete(w);
    const reading = this.lastTraffic.get(w);
    this.lastTraffic.delete(w);
    if (reading) this.retiredTraffic = addReadings([this.retiredTraffic, ...reading], { inFlight: false });
    for (const [id, g] of this.open) if (g.waiting.delete(w) && !g.waiting.size) void this.finish(id);
    const counts = (part as { type?: string }[] | undefined)?.filter((m) => m.type === "counter" || m.type === "histogram");
    if (!counts?.length) return;
    this.folding = this.folding.then(async () => {
      const { AggregatorRegistry } = await import("prom-client");
      this.retired = await AggregatorRegistry.aggregate((this.retired ? [this.retired, counts] : [counts]) as never).getMetricsAsJSON();
    }).catch((err) => this.log.warn("a dead worker's metrics could not be kept; the cluster's counters may drop", { worker: w.id, error: String(err) }));
  }

  private async finish(id: number): Promise<void> {
    const g = this.open.get(id);
    if (!g) return;
    this.open.delete(id);
    clearTimeout(g.timer);
    let answer: ToWorker;
    try {
      if (g.traffic) {
        // A dead worker's readings are in retiredTraffic at once (retire() adds synchronously): nothing to wait for.
        const parts = this.withStandIns(g, this.lastTraffic);
        if (this.retiredTraffic) parts.push([this.retiredTraffic]);
        return sendTo(g.asker, { mg: "metrics-text", id: g.askerId, parts: parts.flat() });
      }
      // Every fold started so far is in `retired`: a worker that answered and died since counts there, once.
      for (let f = this.folding; ; f = this.folding) {
        await f;
        if (f === this.folding) break;
      }
      const parts = this.withStandIns(g, this.last);
      if (this.retired) parts.push(this.retired);
      const { AggregatorRegistry } = await import("prom-client"); // the primary loads it only once scraped
      answer = { mg: "metrics-text", id: g.askerId, text: await AggregatorRegistry.aggregate(parts as never).metrics() };
    } catch (err) {
      answer = { mg: "metrics-text", id: g.askerId, error: String(err) };
    }
    sendTo(g.asker, answer);
  }

  /** Each live worker's answer to this gather, or its last one when it gave none (said in a warning); throws when none answered. */
  private withStandIns(g: { waiting: Set<Worker>; answers: Map<Worker, unknown[]> }, last: Map<Worker, unknown[]>): unknown[][] {
    const parts: unknown[][] = [];
    const standIns: number[] = [];
    let fresh = 0;
    for (const [w, lastPart] of last) {
      const now = g.answers.get(w);
      if (now) fresh++;
      else standIns.push(w.id);
      parts.push(now ?? lastPart);
    }
    const missing = [...g.waiting].map((w) => w.id);
    if (missing.length || standIns.length) {
      this.log.warn(standIns.length
        ? "metrics gathered without some workers' answers (no answer in time): their last answered metrics stand in for them"
        : "metrics gathered without some workers (no answer in time)", standIns.length ? { missing, lastAnswerUsed: standIns } : { missing });
    }
    if (!fresh) throw new Error("no worker answered");
    return parts;
  }
}

/** A message to a worker that may be exiting: a closed channel is not an error worth more than the worker's own exit. */
function sendTo(w: Worker, m: ToWorker): void {
  if (w.isConnected()) w.send(m, () => {});
}

/** True in a process forked by runPrimary. */
export const isWorker = (): boolean => cluster.isWorker && process.env.MG_WORKER === "1";

/**
 * In a worker, once its gateway listens: tell the primary, take reload and shutdown messages from it, and name the
 * worker in an `x-mg-worker` response header (which process served a request, for operators and tests).
 * `stop` starts the process's own graceful shutdown (what its SIGTERM handler runs) and does nothing when one is
 * under way already: after Ctrl-C the whole process group has the signal, and the primary's message comes too.
 */
export function serveAsWorker(gw: RunningGateway, stop: () => void): void {
  const id = String(cluster.worker!.id);
  gw.server.prependListener("request", (_req, res) => res.setHeader("x-mg-worker", id));
  gw.gateway.onReload(() => {
    const texts = gw.gateway.config.texts;
    if (texts && process.connected) process.send!({ mg: "config-accepted", texts, restartPending: [...gw.gateway.restartPending] } satisfies ToPrimary, () => {});
  });
  gw.gateway.onReloadRefused(({ at, trigger, problems }) => {
    if (process.connected) process.send!({ mg: "config-refused", refused: { at, trigger, problems: problems ?? [] } } satisfies ToPrimary, () => {});
  });
  process.on("message", (m: ToWorker) => {
    if (m?.mg === "reload") void gw.gateway.reload(undefined, "sighup");
    else if (m?.mg === "shutdown") stop();
    else if (m?.mg === "exit") process.exit(130); // a second signal to the primary: as a single process does
    else if (m?.mg === "metrics-part") void sendMetricsPart(gw, m.id, m.traffic === true);
    else if (m?.mg === "metrics-text") waitingGathers.get(m.id)?.(m);
    else if (m?.mg === "workers") setWorkerCount({ listening: m.listening, configured: m.configured });
  });
  process.send!({ mg: "listening", url: gw.url, port: gw.port, metricsUrl: gw.metricsUrl, texts: gw.gateway.config.texts, restartPending: [...gw.gateway.restartPending] } satisfies ToPrimary);
  // A scrape of this worker (and its console's traffic) now answers for the whole cluster. After "listening": the
  // primary asks listening workers only, and a gather this worker starts at once (the console's sampler) must count it.
  setClusterScrape(scrapeCluster, clusterReadingsOf);
}

/** How long a starting worker waits for the primary to say what to load; then it reads the file, as at the first start. */
export const CARRIED_MS = 5000;

/** The IPC channel to the primary (the process's own; a test gives its own). */
export interface PrimaryChannel {
  readonly connected: boolean;
  send(m: unknown, cb: (err: Error | null) => void): unknown;
  on(event: "message", fn: (m: ToWorker) => void): unknown;
  off(event: "message", fn: (m: ToWorker) => void): unknown;
}
const processChannel = (): PrimaryChannel | undefined => (process.send ? (process as unknown as PrimaryChannel) : undefined);

/**
 * In a starting worker: the running gateway's config to join (`carried` undefined while the cluster starts: read the
 * file). `unanswered`: the primary said nothing within `waitMs`, so the file is read; the worker logs that it may not
 * run on what the others do.
 */
export function carriedConfig(channel = processChannel(), waitMs = CARRIED_MS): Promise<{ carried?: CarriedConfig; unanswered?: true }> {
  return new Promise((resolve) => {
    if (!channel?.connected) return resolve({});
    const timer = setTimeout(() => answered({ unanswered: true }), waitMs);
    const onMessage = (m: ToWorker) => m?.mg === "carried" && answered(m.carried ? { carried: m.carried } : {});
    function answered(a: { carried?: CarriedConfig; unanswered?: true }): void {
      clearTimeout(timer);
      channel!.off("message", onMessage);
      resolve(a);
    }
    channel.on("message", onMessage);
    channel.send({ mg: "carried?" } satisfies ToPrimary, () => {});
  });
}

/**
 * A worker started in place of one that died cannot start: tell the primary why, which logs it once as a missing
 * worker. False when the primary could not be told (the caller says it itself).
 */
export function tellPrimaryStartFailed(reason: string, channel = processChannel()): Promise<boolean> {
  return new Promise((resolve) => {
    if (!channel?.connected) return resolve(false);
    channel.send({ mg: "start-failed", reason } satisfies ToPrimary, (err) => resolve(!err));
  });
}

async function sendMetricsPart(gw: RunningGateway, id: number, traffic: boolean): Promise<void> {
  let part: ToPrimary;
  const metrics = gw.gateway.metrics;
  // A scrape's part (not the console's traffic): this is the one place a worker notes a scrape, whichever worker the
  // scraper reached (core/scrape-watch.ts).
  const read = traffic ? undefined : metrics.scrapes.reading(() => metrics.requests.added);
  try {
    part = { mg: "metrics-part", id, metrics: traffic ? [await wireReading(metrics)] : await metrics.registry.getMetricsAsJSON() };
  } catch (err) {
    part = { mg: "metrics-part", id, error: String(err) };
  }
  // A gather's part sent: what this worker counted reached a scrape (a draining worker waits for one: core/shutdown.ts).
  if (process.connected) process.send!(part, (err: Error | null) => { if (!err && read && "metrics" in part) read(); });
}

/** Gathers of this worker waiting for the primary's answer. */
type Gathered = { text?: string; parts?: unknown[]; error?: string };
const waitingGathers = new Map<number, (m: Gathered) => void>();
let gatherIds = 0;

function askPrimary(traffic: boolean): Promise<Gathered> {
  const id = gatherIds++;
  return new Promise<Gathered>((resolve, reject) => {
    const timer = setTimeout(() => answered({ error: `the primary did not answer within ${SCRAPE_MS} ms` }), SCRAPE_MS);
    function answered(m: Gathered): void {
      waitingGathers.delete(id);
      clearTimeout(timer);
      if (m.text !== undefined || m.parts !== undefined) resolve(m);
      else reject(new Error(`gathering the workers' metrics failed: ${m.error}`));
    }
    waitingGathers.set(id, answered);
    if (!process.connected) return answered({ error: "no channel to the primary" });
    process.send!((traffic ? { mg: "metrics-gather", id, traffic } : { mg: "metrics-gather", id }) satisfies ToPrimary, () => {});
  });
}

const scrapeCluster = async (): Promise<string> => (await askPrimary(false)).text ?? "";
const clusterReadingsOf = async (): Promise<unknown[]> => (await askPrimary(true)).parts ?? [];
