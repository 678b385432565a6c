// Memos on Redis (store kind redis), shared by every replica: one key each under the store's prefix, with a PX
// expiry so Redis drops them itself.
import type { Redis } from "ioredis";
import type { MemoStore } from "./memo-types.ts";

export class RedisMemoStore implements MemoStore {
  constructor(private readonly r: Redis, private readonly prefix: string) {}

  private key(k: string): string {
    return `${this.prefix}memo:${k}`;
  }

  async put(key: string, value: string, ttlMs: number, now: number): Promise<void> {
    const left = Math.ceil(now + ttlMs - Date.now()); // Redis counts from its own now
    if (left > 0) await this.r.set(this.key(key), value, "PX", left);
  }

  async get(keys: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (!keys.length) return out;
    const values = await this.r.mget(...keys.map((k) => this.key(k)));
    values.forEach((v, i) => {
      if (typeof v === "string") out.set(keys[i]!, v);
    });
    return out;
  }
}
