// The in-process front of the cache: recently used answers, parsed, so a hot answer costs neither a store call nor a
// JSON.parse. Bounded by bytes (each entry's stored size), one per gateway, kept across reloads (rebuilt only when
// cache.memory_bytes changes). An entry lives here at most FRONT_HOLD_MS, and never past its own expiry: on Redis,
// another replica's refresh of an answer reaches this process within that time.
import { LRUCache } from "lru-cache";
import type { GatewayHandle } from "../../core/contracts/gateway.ts";
import type { CacheEntry } from "./entry.ts";

export const FRONT_HOLD_MS = 60_000;

export interface FrontEntry {
  entry: CacheEntry;
  bytes: number;
}

export class Front {
  private readonly lru: LRUCache<string, FrontEntry>;
  constructor(readonly maxBytes: number) {
    this.lru = new LRUCache<string, FrontEntry>({ maxSize: maxBytes, sizeCalculation: (e) => Math.max(1, e.bytes) });
  }

  get(key: string, now: number): CacheEntry | undefined {
    const e = this.lru.get(key);
    if (!e) return undefined;
    if (e.entry.expiresAt <= now) {
      this.lru.delete(key);
      return undefined;
    }
    return e.entry;
  }

  set(key: string, entry: CacheEntry, bytes: number, now: number): void {
    const ttl = Math.min(entry.expiresAt - now, FRONT_HOLD_MS);
    if (ttl <= 0 || bytes > this.maxBytes) return;
    this.lru.set(key, { entry, bytes }, { ttl });
  }

  delete(key: string): void {
    this.lru.delete(key);
  }
}

const fronts = new WeakMap<GatewayHandle, Front>();

/** This gateway's front for `maxBytes` (0: none). */
export function frontFor(gateway: GatewayHandle, maxBytes: number): Front | undefined {
  if (maxBytes <= 0) {
    fronts.delete(gateway);
    return undefined;
  }
  let f = fronts.get(gateway);
  if (!f || f.maxBytes !== maxBytes) fronts.set(gateway, (f = new Front(maxBytes)));
  return f;
}
