// model-gateway start | check | keys | usage — the operator's command line.
// Only light modules are imported statically: the gateway itself (server, config loading with every plugin and
// provider) is imported where a command needs it, so a `start --workers N` primary, which only forks and supervises,
// stays close to a bare Node process (bin/build.mjs bundles the lazy imports as separate chunks).
import { parseArgs } from "node:util";
import { existsSync } from "node:fs";
import { resolve, join } from "node:path";
import { fork } from "node:child_process";
import { sha256Hex } from "./keys/keys.ts";
import { carriedConfig, isWorker, parseWorkers, runPrimary, serveAsWorker, storeRefusal, tellPrimaryStartFailed, CARRIED_MS } from "./cluster.ts";
import { sameOnDisk } from "./config/config-texts.ts";
import { packageRoot } from "./package-root.ts";
import { fallbackSigningSecret, sharedSecretWarning } from "./assets/secret.ts";
import { stopWhenLauncherExits } from "./launcher.ts";
import { keepServingOnUnhandledRejection } from "./unhandled-rejection.ts";
import { holdSighup, releaseSighup } from "./early-sighup.ts";
import { logFilesOpened } from "./log-opening.ts";
import { onClosedPipe } from "./cli-closed-pipe.ts";
import type { RuntimeConfig } from "./config/runtime.ts";

export { beforePluginImport } from "./config/plugin-import.ts";

const HELP = `model-gateway — one HTTP gateway in front of many model providers

Usage:
  model-gateway start [--config gateway.yaml] [--port N] [--host H] [--metrics-port N] [--no-watch] [--workers N|auto]
  model-gateway check [--config gateway.yaml | gateway.yaml]
  model-gateway keys list   [--config F | --url U] [--project P] [--json]
  model-gateway keys new    --project ID [--id NAME] [--sandbox] [--expires 2030-01-01] [--rpm N] [--tpm N]
                            [--budget USD [--budget-period day|week|month|total]] [--config F | --url U]
  model-gateway keys new    --admin --scope read|write [--id NAME] [--expires 2030-01-01] [--config F]
  model-gateway keys revoke --project ID --id NAME [--config F | --url U]
  model-gateway keys rotate --project ID --id NAME [--overlap 1h|30m|2d|SECONDS] [--new-id NAME] [--expires 2030-01-01]
                            [--sandbox] [--config F | --url U]
    (--config F edits gateway.yaml in place; --url U calls a running gateway's admin API with --admin-key K or MG_ADMIN_KEY)
  model-gateway usage [--config gateway.yaml] [--project P] [--since 2026-11-01|7d|24h] [--until ...]
                      [--group-by project,key,model,provider,endpoint] [--bucket none|day|hour] [--sandbox] [--json]
    (usage is kept per hour: --since 30m sums from the start of its hour; the range summed is said on stderr, or
                       with --json as each row's last fields, since/until)
  model-gateway plugin new NAME [--dir DIR] [--gateway SPEC]   (a plugin package: docs/plugins.md)

Exit status: 0 done; 1 failed (a config with problems, a store, file or gateway that said no); 2 a usage error (a
wrong command word, an unknown or missing option, a bad option value); 141 its output's reader left (| head): the
command stopped quietly, as Unix tools do (start keeps serving).
`;

/** The sandbox key documented in the README; the default gateway.yaml holds its sha256. */
const QUICKSTART_KEY = "mg_test_quickstart_sandbox_key_0001";

function defaultConfig(): string {
  const local = resolve("gateway.yaml");
  if (existsSync(local)) return local;
  return join(packageRoot(), "gateway.yaml");
}

/** A --port-like option: decimal digits, 0 (any free port) to 65535; not Number()'s "", "0x50", "1e3" or " 80". */
function portOption(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const n = /^\d{1,5}$/.test(v) ? Number(v) : NaN;
  if (!(n <= 65535)) throw new Error(`${flag} must be a port number (0 to 65535), got ${JSON.stringify(v)}`);
  return n;
}

/** Extra commands (usage, ...) register here. */
export const commands: Record<string, (argv: string[]) => Promise<number>> = {
  usage: async (argv) => (await import("./store/usage-command.ts")).usageCommand(argv),
  plugin: async (argv) => (await import("./scaffold/plugin-new.ts")).pluginCommand(argv),
  async start(argv) {
    const { values } = parseArgs({
      args: argv,
      options: { config: { type: "string", short: "c" }, port: { type: "string", short: "p" }, host: { type: "string" }, "metrics-port": { type: "string" }, "no-watch": { type: "boolean" }, workers: { type: "string", short: "w" } },
    });
    const file = values.config ?? defaultConfig();
    let port: number | undefined, metricsPort: number | undefined, workers: number;
    try {
      port = portOption(values.port, "--port");
      metricsPort = portOption(values["metrics-port"], "--metrics-port");
      workers = parseWorkers(values.workers);
    } catch (err) {
      process.stderr.write(`model-gateway start: ${(err as Error).message}\n`);
      return 2;
    }
    // A worker started in place of one that died: why it cannot start goes to the primary (the gateway serves on).
    let joining = false;
    try {
      // --workers N > 1: this process becomes the cluster's primary (core/cluster.ts); the workers it forks run
      // this same command and take the single-process path below.
      if (workers > 1 && !isWorker()) return await startPrimary(file, workers);
      if (isWorker()) fallbackSigningSecret(); // takes the primary's secret out of the environment before anything spawns
      // A worker started in place of one that died: the running gateway's config, not the file as it is now.
      const asked = isWorker() ? await carriedConfig() : undefined;
      const carried = asked?.carried;
      joining = carried !== undefined;
      // Watching the file, which changed since the others' accepted config: the watch reloads it once listening (it
      // measures from the texts loaded, so an edit made during this start is reloaded too), and that says the outcome.
      // Should the edit be undone before then, the settling reload after listening (below) says it instead.
      const reloadFollows = carried !== undefined && !values["no-watch"] && !sameOnDisk(carried.accepted);
      let gw: Awaited<ReturnType<typeof import("./server.ts").startGateway>> | undefined;
      keepServingOnUnhandledRejection(() => gw?.gateway.log);
      const { startGateway } = await import("./server.ts");
      gw = await startGateway({
        configFile: file,
        port,
        host: values.host,
        metricsPort,
        watch: !values["no-watch"],
        sighup: true,
        load: carried && {
          texts: carried.accepted, startedWith: carried.started,
          joined: { restartPending: carried.restartPending, refused: carried.refused, reloadFollows },
        },
      });
      if (asked?.unanswered) {
        gw.gateway.log.warn(`the cluster's primary did not say within ${CARRIED_MS / 1000} s which config the running workers serve; this worker read the file as it is now, so a setting read only at start that the file changed since the gateway started (store, port) is not the one the others use`, { file });
      }
      // Its own SIGHUP handler is in place now: a reload asked for while it started (./early-sighup.ts) is done.
      if (releaseSighup()) {
        gw.gateway.log.info("SIGHUP before the gateway listened: reloading the config now");
        void gw.gateway.reload(undefined, "sighup");
      }
      // First signal: graceful shutdown (server.shutdown_grace_ms), exit 0. A second one: exit 130 at once — records
      // of answered requests are already in the store or the spool (written before a response completes), except
      // those held in memory only (store down, spool unwritable): written out synchronously first, never dropped.
      // A worker's shutdown may also start with the primary's message; only a second *signal* means "now" (after
      // Ctrl-C the whole process group gets the signal, and the primary's message may come before or after it).
      let stopping = false;
      let signalled = false;
      const stop = (signal: NodeJS.Signals) => {
        if (signalled) {
          process.stderr.write(`${signal} again during shutdown: exiting now\n`);
          let held: ReturnType<typeof gw.gateway.store.saveHeldNow>;
          try {
            held = gw.gateway.store?.saveHeldNow();
          } catch (err) {
            process.stderr.write(`could not write out the ledger records held in memory: ${(err as Error).message}\n`);
          }
          if (held) process.stderr.write(`${held.generationIds.length} ledger record(s) the store could not take were written to ${held.writtenTo} for a replay: ${held.generationIds.join(" ")}\n`);
          process.exit(130);
        }
        signalled = true;
        begin();
      };
      const begin = () => {
        if (stopping) return;
        stopping = true;
        gw.shutdown().then(
          () => process.exit(0),
          (err) => {
            process.stderr.write(`shutdown failed: ${(err as Error).stack ?? err}\n`);
            process.exit(1);
          },
        );
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
      if (!isWorker()) {
        stopWhenLauncherExits(process.env, (parent) => gw.gateway.log.warn("the process that started the gateway (npm) has exited; shutting down", { parent }));
      }
      if (isWorker()) {
        // Store changed to a per-process one since the primary checked (a worker the primary had no config for reads the file).
        const refusal = storeRefusal(gw.gateway.config.store.kind, workers, gw.gateway.config.raw.store === undefined);
        if (refusal) {
          process.stderr.write(`refusing to start a worker: ${refusal}\n`);
          await gw.close();
          return 1;
        }
        serveAsWorker(gw, begin);
        // Joined carrying the others' refused reload: settle against the file as it is now. Where it differs from their
        // accepted texts the watch reloads it; where it matches them (the refused edit undone while this worker
        // started) the watch sees nothing to do, so reload here: "nothing changed" clears the refusal, as theirs did.
        if (carried?.refused && !values["no-watch"] && sameOnDisk(carried.accepted)) void gw.gateway.reload(undefined, "file");
        return -1; // the primary prints the banner once every worker listens
      }
      const secretWarning = sharedSecretWarning(gw.gateway.config);
      if (secretWarning) gw.gateway.log.warn(secretWarning);
      // The README's sandbox key is only advertised when this config still accepts it.
      process.stdout.write(banner(gw.url, gw.metricsUrl, file, gw.gateway.config.keys.has(sha256Hex(QUICKSTART_KEY)), await storeOf(gw.gateway.startConfig)));
      return -1; // keep running
    } catch (err) {
      const [{ ConfigError, formatProblem }, { PortInUseError }, { CannotListenError }, { StoreRefusedError }, { PluginSetupError }, { TracingSetupError }] = await Promise.all([
        import("./config/source.ts"), import("./server.ts"), import("./net/listen-error.ts"), import("./store/guard.ts"), import("./pipeline/setup-error.ts"),
        import("./observability/tracing-setup-error.ts"),
      ]);
      // Why it cannot start. A worker joining a running gateway tells the primary, which logs it once as a missing
      // worker (the others serve on); anything else refuses to start, as the gateway is not running.
      const refuse = async (why: string, detail = "") => {
        if (joining && (await tellPrimaryStartFailed(detail ? `${why}: ${detail.replaceAll("\n", "; ")}` : why))) return 1;
        process.stderr.write(`refusing to start: ${why}${detail ? `\n${detail}` : ""}\n`);
        return 1;
      };
      if (err instanceof ConfigError) return refuse(`${file} has problems`, err.problems.map(formatProblem).join("\n"));
      if (err instanceof PortInUseError) {
        const hint = err.what === "metrics" ? "set metrics.port or pass --metrics-port N" : "pass --port N";
        return refuse(`${(err as Error).message} (another process has it; ${hint})`);
      }
      if (err instanceof CannotListenError || err instanceof StoreRefusedError || err instanceof PluginSetupError || err instanceof TracingSetupError) {
        return refuse(err.message);
      }
      throw err;
    }
  },

  async check(argv) {
    // `check --config F` like every other command; `check F` as it always was. An unknown option is parseArgs's
    // error (main prints it with the usage, exit 2), never a file name.
    const { values, positionals } = parseArgs({ args: argv, options: { config: { type: "string", short: "c" } }, allowPositionals: true });
    if (positionals.length > 1 || (positionals.length === 1 && values.config !== undefined)) {
      process.stderr.write(`model-gateway check: one config file, as --config FILE or FILE (got ${[...(values.config !== undefined ? [values.config] : []), ...positionals].join(", ")})\n\n${HELP}`);
      return 2;
    }
    const file = values.config ?? positionals[0] ?? defaultConfig();
    const [{ loadConfig }, { ConfigError, formatProblem }] = await Promise.all([import("./config/load.ts"), import("./config/source.ts")]);
    try {
      const cfg = await loadConfig(file, { onNotice: (m) => process.stderr.write(`note: ${m}\n`) });
      // A SQLite store.path start cannot open (a directory): start refuses it, so check does (creating nothing).
      const path = (await import("./cli-check-store.ts")).storePathCheck(cfg.store, cfg.dir, file, cfg.raw.store === undefined);
      if (path.problem) {
        process.stdout.write(formatProblem(path.problem) + "\n");
        return 1;
      }
      if (path.note) process.stderr.write(`note: ${path.note}\n`);
      // A store a newer release wrote: start would refuse it, so check does (before anything opens it).
      const schema = await (await import("./store/schema-check.ts")).storeSchemaProblem(cfg.store, cfg.dir, file);
      if (schema) {
        process.stdout.write(formatProblem(schema) + "\n");
        return 1;
      }
      // A key id an API-created key already has: start and reload refuse it, so check does too (when it can ask the store).
      const [{ readStoredKeys }, { apiKeyIdClashes }, { StoreSchemaError }, { storeProblem }] = await Promise.all([
        import("./keys/stored-key.ts"), import("./keys/id-clash.ts"), import("./store/schema-version.ts"), import("./store/index.ts"),
      ]);
      let stored;
      try {
        stored = await readStoredKeys(cfg);
      } catch (err) {
        // A newer release's store (stamped since the check above): refused, like start refuses it.
        if (!(err instanceof StoreSchemaError)) throw err;
        process.stdout.write(formatProblem(storeProblem(cfg.store, file, err.message)) + "\n");
        return 1;
      }
      if (stored.unchecked) process.stderr.write(`note: key ids not checked against the keys created through the admin API: ${stored.unchecked}\n`);
      const clashes = apiKeyIdClashes(cfg, stored.keys ?? []);
      if (clashes.length) {
        process.stdout.write(clashes.map(formatProblem).join("\n") + "\n");
        return 1;
      }
      // A plugin's setup may reach out (a license server, a connection): check leaves it to start, and says so.
      const notSetUp = cfg.pipeline.filter((p) => p.def.setup && !(p.name in cfg.builtins.plugins)).map((p) => p.name);
      if (notSetUp.length) process.stderr.write(`note: check does not run the setup of plugin${notSetUp.length > 1 ? "s" : ""} ${notSetUp.join(", ")} (start does, and refuses to start if it fails)\n`);
      if (cfg.server.egressProxy) {
        const e = (await import("./net/egress-proxy.ts")).describeEgress(cfg.server.egressProxy);
        process.stderr.write(`note: outbound calls go through the egress proxy: https targets ${e.https}; http targets ${e.http}; no_proxy ${e.no_proxy}\n`);
      }
      process.stdout.write(`${file}: ok (${cfg.models.size} models, ${cfg.providers.size} providers, ${cfg.projects.size} projects, pipeline: ${cfg.pipeline.map((p) => p.name).join(" → ")})\n`);
      process.stdout.write(`  store: ${await storeOf(cfg)}\n`);
      return 0;
    } catch (err) {
      if (err instanceof ConfigError) {
        process.stdout.write(err.problems.map(formatProblem).join("\n") + "\n");
        return 1;
      }
      throw err;
    }
  },

  keys: async (argv) => (await import("./keys/keys-command.ts")).keysCommand(argv),
};

// A start that could not start (port, config, store, a plugin's setup) must end: a worker's IPC channel to the
// primary, or a plugin setup given up on that still holds a socket or a timer, would keep it alive; the primary
// sees a worker's exit and stops the rest.
const startHere = commands.start!;
commands.start = async (argv) => {
  holdSighup(); // until the gateway (or the cluster's primary) has a SIGHUP handler of its own
  let code: number;
  try {
    code = await startHere(argv);
  } finally {
    releaseSighup(); // a start that failed (or was refused) no longer notes SIGHUPs; a no-op once handed over
  }
  if (code >= 0) await exitSaid(code);
  return code;
};

/** Exit once what was written to stdout and stderr has gone out (loggers flush their buffers on exit themselves). */
async function exitSaid(code: number): Promise<never> {
  const flushed = (s: NodeJS.WriteStream) => new Promise<void>((r) => {
    const bound = setTimeout(r, 2_000).unref(); // a stream nobody reads never drains: exit regardless
    s.write("", () => { clearTimeout(bound); r(); });
  });
  await Promise.all([flushed(process.stdout), flushed(process.stderr), logFilesOpened()]);
  process.exit(code);
}

/** Which store a loaded config runs on and where (core/store/describe.ts): check's and start's store: line. */
async function storeOf(config: RuntimeConfig): Promise<string> {
  const { describeStore } = await import("./store/describe.ts");
  return describeStore(config.store, config.dir, config.raw.store !== undefined);
}

/** What `start` prints once it listens (the README's sandbox key only when this config still accepts it). */
function banner(url: string, metricsUrl: string | undefined, file: string, quickstart: boolean, store: string, workers?: string): string {
  return `model-gateway listening on ${url} (config ${file}; ${workers ?? `pid ${process.pid}`})\n` +
    `  base_url: ${url}/api/v1   metrics: ${metricsUrl ?? "not served (see metrics: in the config)"}   openapi: ${url}/api/openapi.json\n` +
    `  store: ${store}\n` +
    (quickstart ? `  sandbox key (simulator only, never billed): export MG_KEY=${QUICKSTART_KEY}\n` : "") +
    `  try: curl ${url}/api/v1/chat/completions -H "Authorization: Bearer $MG_KEY" -H "Content-Type: application/json" \\\n` +
    `         -d '{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}'\n`;
}

/** `start --workers N` (N > 1): check the config and its store once, then fork the workers and supervise them. */
async function startPrimary(file: string, workers: number): Promise<number> {
  const facts = await primaryFacts(file, workers);
  if (facts.problems) {
    process.stderr.write(`refusing to start: ${file} has problems\n${facts.problems}\n`);
    return 1;
  }
  if (facts.refusal) {
    process.stderr.write(`refusing to start: ${facts.refusal}\n`);
    return 1;
  }
  const { loggerFromConfig } = await import("./observability/logger.ts");
  const log = loggerFromConfig({ raw: { log: facts.log }, dir: facts.dir } as RuntimeConfig, true);
  if (facts.secretWarning) log.warn(facts.secretWarning); // once here, not once per worker
  stopWhenLauncherExits(process.env, (parent) => log.warn("the process that started the gateway (npm) has exited; shutting down", { parent }));
  // runPrimary installs its SIGHUP handler before it returns; the workers it forks read the config as they start.
  const running = runPrimary({
    workers,
    log,
    onReady: ({ url, metricsUrl, pids }) => process.stdout.write(banner(url, metricsUrl, file, facts.quickstart, facts.store ?? "", `primary pid ${process.pid}, ${workers} workers, pids ${pids.join(" ")}`)),
  });
  if (releaseSighup()) log.info("SIGHUP before the gateway listened: the workers read the config as they start");
  const code = await running;
  await log.close();
  process.exit(code); // the workers are gone (or were told to go, after a second signal)
}

/** What the primary needs from the config: its problems, or why its store cannot serve N workers, else its log settings. */
interface PrimaryFacts {
  problems?: string;
  refusal?: string;
  quickstart: boolean;
  /** sharedSecretWarning's text, when the config calls for it. */
  secretWarning?: string;
  log?: RuntimeConfig["raw"]["log"];
  dir: string;
  /** Which store the workers use and where (the banner's store: line). */
  store?: string;
}

/** main()'s argv[0] in the process primaryFacts starts. */
const FACTS = "__primary-facts";

async function configFacts(file: string, workers: number): Promise<PrimaryFacts> {
  const [{ loadConfig }, { ConfigError, formatProblem }] = await Promise.all([import("./config/load.ts"), import("./config/source.ts")]);
  try {
    const config = await loadConfig(file);
    const quickstart = config.keys.has(sha256Hex(QUICKSTART_KEY));
    return { refusal: storeRefusal(config.store.kind, workers, config.raw.store === undefined), quickstart, secretWarning: sharedSecretWarning(config), log: config.raw.log, dir: config.dir, store: await storeOf(config) };
  } catch (err) {
    if (err instanceof ConfigError) return { problems: err.problems.map(formatProblem).join("\n"), quickstart: false, dir: "" };
    throw err;
  }
}

/**
 * The config check runs loadConfig, which imports the whole gateway (every plugin and provider). Run from the bundle,
 * it happens in a short-lived child process running the bin again, so none of it stays in the primary (~50 MB
 * instead of ~110; a worker thread still left ~17 MB behind). From the sources (tsx, vitest) it runs here.
 */
function primaryFacts(file: string, workers: number): Promise<PrimaryFacts> {
  if (import.meta.url.endsWith(".ts") || !process.argv[1]) return configFacts(file, workers);
  return new Promise((resolve, reject) => {
    const child = fork(process.argv[1]!, [FACTS, file, String(workers)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    child.once("message", (facts: PrimaryFacts) => resolve(facts));
    child.once("error", reject);
    child.once("exit", (code, signal) => reject(new Error(`the config check process exited (${signal ?? code}) without an answer`)));
  });
}

export async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  if (cmd === FACTS && process.send) {
    const facts = await configFacts(rest[0]!, Number(rest[1]));
    process.send(facts, () => process.exit(0));
    return;
  }
  // `| head`: the reader leaving ends a command quietly; a gateway keeps serving.
  onClosedPipe(cmd === "start", cmd && Object.hasOwn(commands, cmd) ? `model-gateway ${cmd}` : "model-gateway");
  if (!cmd || cmd === "--help" || cmd === "-h" || cmd === "help") {
    process.stdout.write(HELP);
    return;
  }
  // A mistyped command is a usage error like a mistyped option: say which, usage on stderr, exit 2.
  if (!Object.hasOwn(commands, cmd)) {
    process.stderr.write(`model-gateway: unknown command ${JSON.stringify(cmd)}\n\n${HELP}`);
    process.exitCode = 2;
    return;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    process.stdout.write(HELP);
    return;
  }
  let code: number;
  try {
    code = await commands[cmd]!(rest);
  } catch (err) {
    // A mistyped option or a missing value: say which, show the usage, no stack trace.
    if (!String((err as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS_")) throw err;
    process.stderr.write(`model-gateway ${cmd}: ${(err as Error).message}\n\n${HELP}`);
    code = 2;
  }
  if (code >= 0) process.exitCode = code;
}
