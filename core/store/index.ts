// store: { kind: memory | sqlite | redis, ledger? } -> a Store (Redis + a Postgres ledger: SplitLedgerStore). A relative SQLite path is resolved against the directory
// of the config file (like `include:`), and its directory is created.
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { ConfigError, type ConfigProblem } from "../config/source.ts";
import type { StoreConfig } from "../generated/types/gateway.ts";
import { MemoryStore } from "./memory.ts";
import { SqliteStore, damaged } from "./sqlite.ts";
import type { Logger } from "../log.ts";
import type { Store, VerifyOptions } from "./types.ts";
import { holdServingLock } from "./sqlite-process-lock.ts";
import { sqliteLockedProblem, sqliteOpenReason } from "./sqlite-open-error.ts";
import { defaultStoreHasNoPlace, defaultStoreUnusable } from "./default-store.ts";
import { makeDirs } from "./make-dirs.ts";
import { sqlitePathOf } from "./paths.ts";

export type { Store } from "./types.ts";

export { DEFAULT_SPOOL_DIR, DEFAULT_SQLITE_PATH, spoolDirOf, sqlitePathOf } from "./paths.ts";

export interface OpenOptions {
  /** Serving: check the store before the first request (verify) and bound its waits (timeoutMs). */
  verify?: VerifyOptions;
  timeoutMs?: number;
  /** Serving with store.ledger: postgres: where this process spools records for Postgres (absent: read only, as the CLI). */
  spoolDir?: string;
  log?: Logger;
  /** The config has no store: section (this is the default SQLite file): a refusal says so, and what to write. */
  defaulted?: boolean;
}

/** Open the store; failures (unwritable path, unreachable Redis) name the config's `store:` line and refuse the boot. */
export async function createStore(config: StoreConfig | undefined, configDir: string, configFile?: string, o: OpenOptions = {}): Promise<Store> {
  const noPlace = o.defaulted && o.verify && configFile ? defaultStoreHasNoPlace(configFile, configDir) : undefined;
  if (noPlace) throw new ConfigError([storeProblem(config, configFile!, noPlace)]);
  try {
    return await open(config, configDir, o);
  } catch (err) {
    if (!configFile) throw err;
    throw new ConfigError([storeProblem(config, configFile, (err as Error).message)]);
  }
}

/** A store's problem as the operator reads it: at the config file's `store:` line (1 when it has none). */
export function storeProblem(config: StoreConfig | undefined, configFile: string, message: string): ConfigProblem {
  let line = 1;
  try {
    // Not read again from a pipe or a terminal (a config given as <(...) or /dev/stdin): it has been read to its end.
    if (!statSync(configFile).isFile()) throw new Error("not a regular file");
    const at = readFileSync(configFile, "utf8").split("\n").findIndex((l) => /^store\s*:/.test(l));
    if (at >= 0) line = at + 1;
  } catch {
    // the file is gone: report line 1
  }
  return { file: configFile, line, column: 1, message: `store (${config?.kind ?? "memory"}): ${message.replace(/^store: /, "")}` };
}

async function open(config: StoreConfig | undefined, configDir: string, o: OpenOptions): Promise<Store> {
  switch (config?.kind ?? "memory") {
    case "sqlite": {
      const path = sqlitePathOf(config, configDir);
      // Serving (verify): the one process serving the file, refused before it touches it when another one is; readers
      // (`model-gateway usage`) take no lock.
      try {
        if (o.verify && path !== ":memory:") makeDirs(dirname(path));
        // A side file this start made is removed again if it refuses the store (a damaged file): nothing left behind.
        const lockMade = o.verify && path !== ":memory:" && !existsSync(`${path}.lock`);
        const servingLock = o.verify && path !== ":memory:" ? holdServingLock(path) : undefined;
        let store: SqliteStore | undefined;
        try {
          // Serving: a write waits for another process's lock no longer than any store call may take.
          store = new SqliteStore(path, { ...(o.timeoutMs ? { busyTimeoutMs: o.timeoutMs } : {}), fsync: config?.fsync ?? true, servingLock });
          // Checked here, not after: a file refused by the integrity check takes its side file with it too.
          if (o.verify) await store.verify(o.verify);
          return store;
        } catch (err) {
          if (lockMade) rmSync(`${path}.lock`, { force: true }); // still held here: no other start is using it
          await store?.close().catch(() => {});
          servingLock?.release();
          const code = String((err as { code?: string }).code ?? "");
          if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") throw new Error(damaged(path, (err as Error).message));
          throw err;
        }
      } catch (err) {
        // SQLite's "unable to open database file" (or mkdir's ENOENT on a read-only mount) names neither the file nor
        // why: say which file and what the file system refuses, when it tells.
        const code = String((err as { code?: string }).code ?? "");
        const onFileSystem = code.startsWith("SQLITE_CANTOPEN") || code.startsWith("SQLITE_READONLY") || /^E[A-Z]+$/.test(code);
        if (path === ":memory:") throw err;
        if (onFileSystem) {
          const reason = sqliteOpenReason(path);
          // The default file (no store: section): the operator learns it is the default, and what to write instead.
          if (o.defaulted) throw new Error(defaultStoreUnusable(path, reason ?? (err as Error).message, existsSync(path)));
          throw reason ? new Error(`cannot open ${path}: ${reason}`) : err;
        }
        const locked = sqliteLockedProblem(path, err); // "database is locked": whose lock, and what to do
        throw locked ? new Error(locked) : err;
      }
    }
    case "redis":
      return verified(await openRedis(config, o), o);
    default:
      return verified(new MemoryStore(), o);
  }
}

/** Serving: a store that fails its check before the first request is closed and refused. */
async function verified(store: Store, o: OpenOptions): Promise<Store> {
  if (!o.verify) return store;
  try {
    await store.verify?.(o.verify);
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }
  return store;
}

async function openRedis(config: StoreConfig | undefined, o: OpenOptions): Promise<Store> {
  if (!config?.url) throw new Error("store: kind redis needs url: redis://host:6379");
  // Loaded only for this kind: a gateway on SQLite or memory carries neither Redis's client nor Postgres's.
  const { RedisStore } = await import("./redis.ts");
  const lc = config.ledger;
  if (lc?.kind !== "postgres") return RedisStore.connect(config.url, config.prefix ?? "mg:", { commandTimeoutMs: o.timeoutMs });
  if (!lc.url) throw new Error("store: ledger kind postgres needs url: postgres://user@host:5432/db");
  const [{ PostgresLedger }, { SplitLedgerStore }] = await Promise.all([import("./postgres-ledger.ts"), import("./ledger-split.ts")]);
  const ledger = await PostgresLedger.open({
    url: lc.url, spoolDir: o.spoolDir, log: o.log, retentionDays: lc.retention_days, batchSize: lc.batch_size,
    flushIntervalMs: lc.flush_interval_ms, poolSize: lc.pool_size, queryTimeoutMs: lc.query_timeout_ms,
  });
  try {
    const hot = await RedisStore.connect(config.url, config.prefix ?? "mg:", { commandTimeoutMs: o.timeoutMs, spendSource: ledger, log: o.log });
    const store = new SplitLedgerStore(hot, ledger, o.log);
    // Serving: records an earlier Redis-only ledger left in its stream go to Postgres once (readers leave them).
    if (o.spoolDir) store.importEarlierRecords();
    return store;
  } catch (err) {
    await ledger.close();
    throw err;
  }
}
