// Cached answers in this process (store kind memory): a Map in least-recently-used order, bounded by the byte total.
import { DEFAULT_CACHE_MAX_BYTES, type ResponseCacheStore } from "./response-cache-types.ts";

interface Kept { value: string; bytes: number; expires: number }

export class MemoryResponseCacheStore implements ResponseCacheStore {
  private readonly entries = new Map<string, Kept>();
  private total = 0;
  private maxBytes = DEFAULT_CACHE_MAX_BYTES;

  async get(key: string, now: number): Promise<string | undefined> {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    if (e.expires <= now) {
      this.total -= e.bytes;
      return undefined;
    }
    this.entries.set(key, e); // last = most recently used
    return e.value;
  }

  async put(key: string, value: string, ttlMs: number, now: number): Promise<void> {
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.total -= old.bytes;
    }
    const bytes = Buffer.byteLength(value);
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { value, bytes, expires: now + ttlMs });
    this.total += bytes;
    this.evict();
  }

  setMaxBytes(bytes: number): void {
    this.maxBytes = bytes;
    this.evict();
  }

  private evict(): void {
    for (const [k, e] of this.entries) {
      if (this.total <= this.maxBytes) return;
      this.entries.delete(k);
      this.total -= e.bytes;
    }
  }
}
