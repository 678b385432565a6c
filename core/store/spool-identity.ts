// Which store a spool's records are for, as a short tag in its file names (<name>.<tag>.<pid>.jsonl): two gateways
// on different stores may share one spool_dir (the default ./data/spool, relative to the config file, is shared by
// every config in one directory), and a process must adopt only the records written for its own store. The tag is
// the kind and a hash of where the store is: the resolved SQLite file, Redis host/port/db and key prefix, Postgres
// host/port/database — never a password (credentials are left out before hashing).
import { realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import type { StoreConfig } from "../generated/types/gateway.ts";
import { DEFAULT_SQLITE_PATH } from "./index.ts";
import { spoolTag as tag, where } from "./spool-tag.ts";

/** The tag of the store the gateway's ledger spool replays into (memory: this process's own — it adopts nothing). */
export function storeSpoolTag(config: StoreConfig | undefined, configDir: string): string {
  switch (config?.kind) {
    case "sqlite": {
      const p = config.path ?? DEFAULT_SQLITE_PATH;
      if (p === ":memory:") return tag("memory", String(process.pid));
      return tag("sqlite", realFile(isAbsolute(p) ? p : resolve(configDir, p)));
    }
    case "redis": {
      const redis = `${where(config.url ?? "", 6379, "0")} ${config.prefix ?? "mg:"}`;
      // Redis with a Postgres ledger: the records go to both, so both name the store.
      return config.ledger?.kind === "postgres" ? tag("redispg", `${redis} ${where(config.ledger.url ?? "", 5432, "")}`) : tag("redis", redis);
    }
    default:
      return tag("memory", String(process.pid));
  }
}

/** The file's real path (a symlinked directory or file names the same store), as far as it exists yet. */
function realFile(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}
