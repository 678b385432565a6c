// A gateway.yaml key's id must not be one a key created through the admin API already has in that project (a running
// gateway would refuse the reload, core/keys/id-clash.ts): `model-gateway keys new/rotate --config` check the key they
// add, `model-gateway check` every key of the file. The store gateway.yaml names is read the way `model-gateway
// usage` reads it (no serving lock, every wait bounded). A memory store lives only inside the gateway process: there
// the gateway's reload is the only check.
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { loadConfig } from "../config/load.ts";
import { createStore, DEFAULT_SQLITE_PATH } from "../store/index.ts";
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
  const { keys, unchecked } = await readStoredKeys(config, file);
  return { key: keys?.find((k) => k.project === project && k.id === id), unchecked };
}

/** Every key the config's store holds (none for a memory store or a SQLite file not made yet); `unchecked` says why the store could not be asked. */
export async function readStoredKeys(config: LoadedConfig, file: string): Promise<{ keys?: StoredKey[]; unchecked?: string }> {
  const sc = config.store;
  if (sc.kind === "memory") return { keys: [] };
  if (sc.kind === "sqlite") {
    const p = sc.path ?? DEFAULT_SQLITE_PATH;
    // No file yet: no keys, and a check must not create one.
    if (p === ":memory:" || !existsSync(isAbsolute(p) ? p : resolve(config.dir, p))) return { keys: [] };
  }
  try {
    const store = await createStore(sc, config.dir, file, { timeoutMs: WAIT_MS });
    try {
      return { keys: await settleWithin(store.apiKeys.list(), WAIT_MS, () => { throw new Error(`no answer within ${WAIT_MS / 1000} s`); }) };
    } finally {
      await settleWithin(store.close().catch(() => {}), WAIT_MS, () => undefined);
    }
  } catch (err) {
    return { unchecked: `the store (${sc.kind}) did not answer: ${(err as Error).message.split("\n")[0]}` };
  }
}
