// store: { kind: memory | sqlite | redis } -> a Store. A relative SQLite path is resolved against the directory
// of the config file (like `include:`), and its directory is created.
import { isAbsolute, resolve } from "node:path";
import type { StoreConfig } from "../generated/types/gateway.ts";
import { MemoryStore } from "./memory.ts";
import { SqliteStore } from "./sqlite.ts";
import { RedisStore } from "./redis.ts";
import type { Store } from "./types.ts";

export type { Store } from "./types.ts";

export const DEFAULT_SQLITE_PATH = "./data/gateway.db";

export async function createStore(config: StoreConfig | undefined, configDir: string): Promise<Store> {
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
