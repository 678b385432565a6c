// Cached answers on Redis (store kind redis), shared by every replica: one key each under the store's prefix, with a
// PX expiry so Redis drops them itself. Their total is the server's to bound (maxmemory); each entry's size is capped
// by the writer.
import type { Redis } from "ioredis";
import type { ResponseCacheStore } from "./response-cache-types.ts";

export class RedisResponseCacheStore implements ResponseCacheStore {
  constructor(private readonly r: Redis, private readonly prefix: string) {}

  private key(k: string): string {
    return `${this.prefix}rc:${k}`;
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.r.get(this.key(key))) ?? undefined;
  }

  async put(key: string, value: string, ttlMs: number, now: number): Promise<void> {
    const left = Math.ceil(now + ttlMs - Date.now()); // Redis counts from its own now
    if (left > 0) await this.r.set(this.key(key), value, "PX", left);
  }

  setMaxBytes(): void {}
}
