// ioredis, loaded by the first Redis connection (the store's, or the shared statistics'): a gateway on SQLite or
// memory never loads it (~2 MB of heap per process). Synchronous, because statistics connect from a constructor.
import { createRequire } from "node:module";
import type * as IORedis from "ioredis";

let loaded: typeof IORedis | undefined;

export function ioredis(): typeof IORedis {
  return (loaded ??= createRequire(import.meta.url)("ioredis") as typeof IORedis);
}
