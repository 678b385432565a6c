// API keys on Redis (store kind redis), shared by every replica: one hash per key (a field per record field, each a
// JSON value, so a change sets only its own fields, atomically), a set of all of them, an index project+id -> key
// for uniqueness, and a version counter every change increments — the change feed replicas poll. Each key's hash also
// holds its own change counter, rev, counted in the same script as the change (StoredKey.rev): what tells a later
// state of a key from an older one, where the replicas' clocks cannot.
import type { Redis } from "ioredis";
import type { ApiKeyStore, KeyPatch, RotateResult, StoredKey } from "./api-keys-types.ts";
import { leastUptimeMs } from "./redis-uptime.ts";

/** KEYS = id index, key set, key hash, version; ARGV = project\0id, sha256, field, value, field, value, ... */
const CREATE = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[2])
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1]) end
redis.call('HSETNX', KEYS[3], 'rev', 1)
redis.call('INCR', KEYS[4])
return 1
`;

/**
 * A key's rev after a change (in the scripts below, after the change's fields are set; `before`: its rev before it):
 * one more than before, or the rev a write-back gives when that is higher (the state it puts back had it).
 */
const BUMP_REV = `
local function bumpRev(key, before)
  local given = tonumber(redis.call('HGET', key, 'rev') or '0')
  redis.call('HSET', key, 'rev', math.max(before + 1, given))
end
`;

/** KEYS = key hash, version; ARGV = fields to delete (count), then those fields, then field, value pairs to set. */
const UPDATE = BUMP_REV + `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
local before = tonumber(redis.call('HGET', KEYS[1], 'rev') or '0')
local n = tonumber(ARGV[1])
for i = 2, n + 1 do redis.call('HDEL', KEYS[1], ARGV[i]) end
for i = n + 2, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
bumpRev(KEYS[1], before)
redis.call('INCR', KEYS[2])
return redis.call('HGETALL', KEYS[1])
`;

/**
 * Rotation, one script so concurrent rotations of a key cannot both pass the check: the old key must have no successor
 * and not be revoked, the new one's id and hash must be free. KEYS = id index, key set, new key's hash, version, old
 * key's hash; ARGV = project\0id, new sha256, n, the new key's n field/value strings, then the old key's to set.
 */
const ROTATE = BUMP_REV + `
if redis.call('EXISTS', KEYS[5]) == 0 then return {'missing'} end
local by = redis.call('HGET', KEYS[5], 'replacedBy')
if by then return {'replaced', by} end
local revoked = redis.call('HGET', KEYS[5], 'revokedAt')
if revoked and revoked ~= 'null' then return {'revoked'} end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return {'taken'} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[2])
local n = tonumber(ARGV[3])
for i = 4, n + 3, 2 do redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1]) end
redis.call('HSETNX', KEYS[3], 'rev', 1)
local before = tonumber(redis.call('HGET', KEYS[5], 'rev') or '0')
for i = n + 4, #ARGV, 2 do redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1]) end
bumpRev(KEYS[5], before)
redis.call('INCR', KEYS[4])
return {'ok', redis.call('HGETALL', KEYS[5])}
`;

/** KEYS[1] uses hash; ARGV = sha256, ms, ... — each kept only if later. */
const TOUCH = `
for i = 1, #ARGV, 2 do
  local old = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0')
  if tonumber(ARGV[i + 1]) > old then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
return 1
`;

type Cmd = (...args: (string | number)[]) => Promise<any>;

function fields(k: StoredKey | KeyPatch): string[] {
  const out: string[] = [];
  for (const [f, v] of Object.entries(k)) if (v !== undefined) out.push(f, JSON.stringify(v));
  return out;
}

function decode(flat: string[] | Record<string, string>): StoredKey | undefined {
  const entries = Array.isArray(flat) ? pairs(flat) : Object.entries(flat);
  if (!entries.length) return undefined;
  const out: Record<string, unknown> = {};
  for (const [f, v] of entries) out[f] = JSON.parse(v);
  return out as unknown as StoredKey;
}

function pairs(flat: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
}

export class RedisApiKeyStore implements ApiKeyStore {
  private readonly r: Redis & { mgKeyCreate: Cmd; mgKeyUpdate: Cmd; mgKeyRotate: Cmd; mgKeyTouch: Cmd };

  constructor(redis: Redis, private readonly prefix: string) {
    redis.defineCommand("mgKeyCreate", { lua: CREATE, numberOfKeys: 4 });
    redis.defineCommand("mgKeyUpdate", { lua: UPDATE, numberOfKeys: 2 });
    redis.defineCommand("mgKeyRotate", { lua: ROTATE, numberOfKeys: 5 });
    redis.defineCommand("mgKeyTouch", { lua: TOUCH, numberOfKeys: 1 });
    this.r = redis as RedisApiKeyStore["r"];
  }

  private k(part: string): string {
    return `${this.prefix}${part}`;
  }

  async list(): Promise<StoredKey[]> {
    const hashes = await this.r.smembers(this.k("apikeys"));
    const out: StoredKey[] = [];
    for (let i = 0; i < hashes.length; i += 500) {
      const p = this.r.pipeline();
      for (const h of hashes.slice(i, i + 500)) p.hgetall(this.k(`apikey:${h}`));
      for (const [err, v] of (await p.exec()) ?? []) {
        if (err) throw err;
        const k = decode(v as Record<string, string>);
        if (k) out.push(k);
      }
    }
    return out;
  }

  async get(sha256: string): Promise<StoredKey | undefined> {
    return decode(await this.r.hgetall(this.k(`apikey:${sha256}`)));
  }

  async create(key: StoredKey): Promise<boolean> {
    const done = await this.r.mgKeyCreate(this.k("apikey-ids"), this.k("apikeys"), this.k(`apikey:${key.sha256}`), this.k("apikeys:version"),
      `${key.project}\0${key.id}`, key.sha256, ...fields(key));
    return Number(done) === 1;
  }

  async update(sha256: string, patch: KeyPatch): Promise<StoredKey | undefined> {
    const removed = Object.entries(patch).filter(([, v]) => v === undefined).map(([f]) => f);
    const out = await this.r.mgKeyUpdate(this.k(`apikey:${sha256}`), this.k("apikeys:version"), removed.length, ...removed, ...fields(patch));
    return out ? decode(out as string[]) : undefined;
  }

  async rotate(sha256: string, fresh: StoredKey, patch: KeyPatch): Promise<RotateResult> {
    const created = fields(fresh);
    const [outcome, detail] = (await this.r.mgKeyRotate(this.k("apikey-ids"), this.k("apikeys"), this.k(`apikey:${fresh.sha256}`), this.k("apikeys:version"),
      this.k(`apikey:${sha256}`), `${fresh.project}\0${fresh.id}`, fresh.sha256, created.length, ...created, ...fields(patch))) as [string, string | string[] | undefined];
    if (outcome === "ok") return { ok: true, previous: decode(detail as string[])! };
    if (outcome === "replaced") return { ok: false, reason: "replaced", replacedBy: JSON.parse(detail as string) };
    return { ok: false, reason: outcome as "missing" | "revoked" | "taken" };
  }

  /**
   * The change counter, with the store's epoch (redis.ts): a Redis that lost its data, or an older backup restored,
   * has another epoch, so every replica reloads (and writes back what it lost) even where the counter came out equal.
   */
  async version(): Promise<string> {
    const [v, epoch] = await this.r.mget(this.k("apikeys:version"), this.k("epoch"));
    return `${v ?? "0"} ${epoch ?? "-"}`;
  }

  async touch(used: Map<string, number>): Promise<void> {
    if (!used.size) return;
    const args: (string | number)[] = [];
    for (const [h, at] of used) args.push(h, Math.round(at));
    await this.r.mgKeyTouch(this.k("apikeys:used"), ...args);
  }

  async serverUptimeMs(): Promise<number | undefined> {
    return leastUptimeMs(await this.r.info("server"));
  }

  async lastUsed(): Promise<Map<string, number>> {
    const all = await this.r.hgetall(this.k("apikeys:used"));
    return new Map(Object.entries(all).map(([h, at]) => [h, Number(at)]));
  }
}
