// Cached answers on Redis (store kind redis), shared by every replica: one key each under the store's prefix, with a
// PX expiry so Redis drops them itself. Their byte total is held under cache.max_bytes in the same Lua script that
// writes one (atomic on the server, on its clock): an index of the answers by expiry and a running total — answers
// Redis has already expired leave the total first, then, while it is over the limit, the answers closest to expiry
// go. A cache thus never fills the Redis that holds the ledger and the spend.
import type { Redis } from "ioredis";
import { DEFAULT_CACHE_MAX_BYTES, type ResponseCacheStore } from "./response-cache-types.ts";

/**
 * KEYS: value key, index (zset member -> expiry ms), sizes (hash member -> bytes), total.
 * ARGV: value, ttl ms, bytes, max bytes, member, value key prefix.
 */
const PUT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function forget(m)
  local s = tonumber(redis.call('HGET', KEYS[3], m) or '0')
  redis.call('HDEL', KEYS[3], m)
  redis.call('ZREM', KEYS[2], m)
  if s > 0 then redis.call('DECRBY', KEYS[4], s) end
end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 500)) do forget(m) end
forget(ARGV[5])
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[5])
redis.call('HSET', KEYS[3], ARGV[5], ARGV[3])
local total = tonumber(redis.call('INCRBY', KEYS[4], ARGV[3]))
local max = tonumber(ARGV[4])
local evicted = 0
while total > max and evicted < 500 do
  local first = redis.call('ZRANGE', KEYS[2], 0, 1)
  local victim = first[1]
  if victim == ARGV[5] then victim = first[2] end
  if not victim then break end
  redis.call('DEL', ARGV[6] .. victim)
  forget(victim)
  total = tonumber(redis.call('GET', KEYS[4]) or '0')
  evicted = evicted + 1
end
return total
`;

type Put = (...args: (string | number)[]) => Promise<number>;

export class RedisResponseCacheStore implements ResponseCacheStore {
  private maxBytes = DEFAULT_CACHE_MAX_BYTES;
  private readonly r: Redis & { mgCachePut: Put };

  constructor(redis: Redis, private readonly prefix: string) {
    redis.defineCommand("mgCachePut", { lua: PUT, numberOfKeys: 4 });
    this.r = redis as Redis & { mgCachePut: Put };
  }

  private key(k: string): string {
    return `${this.prefix}rc:${k}`;
  }

  async get(key: string, _now?: number): Promise<string | undefined> {
    return (await this.r.get(this.key(key))) ?? undefined;
  }

  async put(key: string, value: string, ttlMs: number, now: number): Promise<void> {
    const left = Math.ceil(now + ttlMs - Date.now()); // Redis counts from its own now
    const bytes = Buffer.byteLength(value);
    if (left <= 0 || bytes > this.maxBytes) return;
    const p = this.prefix;
    await this.r.mgCachePut(this.key(key), `${p}rci:index`, `${p}rci:sizes`, `${p}rci:total`, value, left, bytes, this.maxBytes, key, `${p}rc:`);
  }

  setMaxBytes(bytes: number): void {
    this.maxBytes = bytes;
  }

  /** The byte total of the answers held (for tests and the operator). */
  async bytes(): Promise<number> {
    return Number((await this.r.get(`${this.prefix}rci:total`)) ?? 0);
  }
}
