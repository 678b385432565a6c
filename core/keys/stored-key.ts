// A gateway.yaml key's id must not be one a key created through the admin API already has in that project (a running
// gateway would refuse the reload, core/keys/id-clash.ts): `model-gateway keys new/rotate --config` check the key they
// add, `model-gateway check` every key of the file. The store gateway.yaml names is only read, never created or
// migrated (a gateway may be serving it), every wait bounded: a SQLite file through a read-only connection, Redis
// through its keys alone (the Postgres ledger holds none). A store a newer release wrote is refused (StoreSchemaError,
// thrown: the command must stop, not go on unchecked). A memory store lives only inside the gateway process: there
// the gateway's reload is the only check.
import { existsSync } from "node:fs";
import { loadConfig } from "../config/load.ts";
import { sqlitePathOf } from "../store/index.ts";
import { hasTable, openSqliteReadOnly } from "../store/sqlite-read-only.ts";
import { StoreSchemaError } from "../store/schema-version.ts";
import { settleWithin } from "../deadline.ts";
import type { StoredKey } from "../store/api-keys-types.ts";
import type { LoadedConfig } from "../config/loaded.ts";

const WAIT_MS = 10_000;

/** The stored key of `project` with this id; `unchecked` says why the store could not be asked. */
export async function storedKeyWithId(file: string, project: string, id: string): Promise<{ key?: StoredKey; unchecked?: string }> {
  let config;
  try {
    config = await loadConfig(file, { onNotice: () => {} });
  } catch (err) {
    return { unchecked: `${file} does not load (${(err as Error).message.split("\n")[0]})` };
  }
  const { keys, unchecked } = await readStoredKeys(config);
  return { key: keys?.find((k) => k.project === project && k.id === id), unchecked };
}

/**
 * Every key the config's store holds (none for a memory store or a SQLite file not made yet); `unchecked` says why
 * the store could not be asked. Throws StoreSchemaError for a store a newer release wrote.
 */
export async function readStoredKeys(config: LoadedConfig): Promise<{ keys?: StoredKey[]; unchecked?: string }> {
  const sc = config.store;
  try {
    if (sc.kind === "sqlite") return { keys: sqliteKeys(sqlitePathOf(sc, config.dir)) };
    if (sc.kind !== "redis" || !sc.url) return { keys: [] };
    const { RedisStore } = await import("../store/redis.ts");
    const redis = await RedisStore.connect(sc.url, sc.prefix ?? "mg:", { commandTimeoutMs: WAIT_MS });
    try {
      return { keys: await settleWithin(redis.apiKeys.list(), WAIT_MS, () => { throw new Error(`no answer within ${WAIT_MS / 1000} s`); }) };
    } finally {
      await settleWithin(redis.close().catch(() => {}), WAIT_MS, () => undefined);
    }
  } catch (err) {
    if (err instanceof StoreSchemaError) throw err;
    return { unchecked: `the store (${sc.kind}) did not answer: ${(err as Error).message.replace(/^store: /, "").split("\n")[0]}` };
  }
}

/** The keys of a SQLite file, read as it is: none before it exists or before it had keys (a release without them). */
function sqliteKeys(path: string): StoredKey[] {
  // No file yet: no keys, and a check must not create one.
  if (path === ":memory:" || !existsSync(path)) return [];
  const db = openSqliteReadOnly(path, WAIT_MS);
  try {
    if (!hasTable(db, "api_keys")) return [];
    return (db.prepare("SELECT record FROM api_keys").all() as { record: string }[]).map((r) => JSON.parse(r.record));
  } finally {
    db.close();
  }
}
