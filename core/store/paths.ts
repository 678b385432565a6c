// Where a `store:` config keeps its files: the SQLite database and the spool, relative paths resolved against the
// config file's directory (like `include:`). Kept apart from ./index.ts so the config layer can compare them without
// loading the stores.
import { isAbsolute, resolve } from "node:path";
import type { StoreConfig } from "../generated/types/gateway.ts";

export const DEFAULT_SQLITE_PATH = "./data/gateway.db";
export const DEFAULT_SPOOL_DIR = "./data/spool";

/** The spool directory of a `store:` config, resolved like the SQLite path (against the config file's directory). */
export function spoolDirOf(config: StoreConfig | undefined, configDir: string): string {
  const d = config?.spool_dir ?? DEFAULT_SPOOL_DIR;
  return isAbsolute(d) ? d : resolve(configDir, d);
}

/** The SQLite file of a `store:` config (kind sqlite), resolved against the config file's directory. */
export function sqlitePathOf(config: StoreConfig | undefined, configDir: string): string {
  const p = config?.path ?? DEFAULT_SQLITE_PATH;
  return p === ":memory:" || isAbsolute(p) ? p : resolve(configDir, p);
}
