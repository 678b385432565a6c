// store: { kind: memory | sqlite | redis } -> a Store. A relative SQLite path is resolved against the directory
// of the config file (like `include:`), and its directory is created.
import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { ConfigError } from "../config/source.ts";
import type { StoreConfig } from "../generated/types/gateway.ts";
import { MemoryStore } from "./memory.ts";
import { SqliteStore } from "./sqlite.ts";
import { RedisStore } from "./redis.ts";
import type { Store } from "./types.ts";

export type { Store } from "./types.ts";

export const DEFAULT_SQLITE_PATH = "./data/gateway.db";

/** Open the store; failures (unwritable path, unreachable Redis) name the config's `store:` line and refuse the boot. */
export async function createStore(config: StoreConfig | undefined, configDir: string, configFile?: string): Promise<Store> {
  try {
    return await open(config, configDir);
  } catch (err) {
    if (!configFile) throw err;
    let line = 1;
    try {
      const at = readFileSync(configFile, "utf8").split("\n").findIndex((l) => /^store\s*:/.test(l));
      if (at >= 0) line = at + 1;
    } catch {
      // the file is gone: report line 1
    }
    const message = (err as Error).message.replace(/^store: /, "");
    throw new ConfigError([{ file: configFile, line, column: 1, message: `store (${config?.kind ?? "memory"}): ${message}` }]);
  }
}

async function open(config: StoreConfig | undefined, configDir: string): Promise<Store> {
  switch (config?.kind ?? "memory") {
    case "sqlite": {
      const p = config?.path ?? DEFAULT_SQLITE_PATH;
      return new SqliteStore(p === ":memory:" || isAbsolute(p) ? p : resolve(configDir, p));
    }
    case "redis":
      if (!config?.url) throw new Error("store: kind redis needs url: redis://host:6379");
      return RedisStore.connect(config.url, config.prefix ?? "mg:");
    default:
      return new MemoryStore();
  }
}
