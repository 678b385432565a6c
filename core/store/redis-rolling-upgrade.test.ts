// A rolling upgrade (or a rollback) runs replicas of two releases on one Redis. The previous release reads, settles
// and renews budget holds only in `resv:<scope>:<period>`: this release mirrors each of its holds there, so
// neither admits past what the other holds, and a hold settled by either is gone for both. The older replica here
// runs that release's own scripts (verbatim) on the same Redis.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { RedisStore } from "./redis.ts";
import { periodOf } from "./periods.ts";
import type { LedgerRecord } from "../contracts/ledger-reader.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";

/** The previous release (1a3cfb0^): RESERVE and RESERVED as it ran them; its record and release HDEL the hold there. */
const OLD_RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
local all = redis.call('HGETALL', KEYS[2])
local reserved = 0
for i = 1, #all, 2 do
  local amount, expires = string.match(all[i + 1], '^(%d+):(%d+)$')
  if tonumber(expires) <= now then redis.call('HDEL', KEYS[2], all[i]) else reserved = reserved + tonumber(amount) end
end
local amount = tonumber(ARGV[2])
if spent + reserved + amount > tonumber(ARGV[3]) then
  return { 0, string.format('%.0f', spent), string.format('%.0f', reserved) }
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':' .. string.format('%.0f', now + tonumber(ARGV[4])))
local ttl = tonumber(ARGV[4]) + 60000
if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
return { 1, string.format('%.0f', spent), string.format('%.0f', reserved + amount) }
`;
const OLD_RESERVED = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('HGETALL', KEYS[1])
local reserved = 0
for i = 1, #all, 2 do
  local amount, expires = string.match(all[i + 1], '^(%d+):(%d+)$')
  if tonumber(expires) > now then reserved = reserved + tonumber(amount) end
end
return string.format('%.0f', reserved)
`;

let redis: TestRedis;
let raw: Redis;
let n = 0;
beforeAll(async () => {
  redis = await startRedis();
  raw = new Redis(redis.url);
});
afterAll(async () => {
  raw?.disconnect();
  await redis?.stop();
});

const w = periodOf("month", Date.now());
const LIMIT = 100n;

/** A replica of the older release on the same Redis and prefix. */
function olderReplica(prefix: string) {
  const resv = (scope: string) => `${prefix}resv:${scope}:${w.key}`;
  return {
    async reserve(scope: string, id: string, amount: bigint): Promise<boolean> {
      const [ok] = await raw.eval(OLD_RESERVE, 2, `${prefix}spend:${scope}:${w.key}`, resv(scope), id, amount.toString(), LIMIT.toString(), 900_000) as number[];
      return Number(ok) === 1;
    },
    async reserved(scope: string): Promise<bigint> {
      return BigInt(await raw.eval(OLD_RESERVED, 1, resv(scope)) as string);
    },
    /** Its record (or release) of a request settles the hold where it keeps them. */
    async settle(scope: string, id: string): Promise<void> {
      await raw.hdel(resv(scope), id);
    },
  };
}

const entry = (generationId: string, costPico: bigint): LedgerRecord => ({
  generationId, requestId: generationId, ts: Date.now(), keyId: "k1", project: "acme", endpoint: "chat", model: "openai/gpt-4o-mini",
  provider: "openai", attempts: 1, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0,
  videoSeconds: 0, searchUnits: 0, webSearches: 0, costUsd: "0", costPico, latencyMs: 1, ttftMs: null, status: 200, outcome: "ok",
  sandbox: false, estimated: false,
});

describe("Redis budget holds with replicas of the release before this one beside it", () => {
  let store: RedisStore;
  let old: ReturnType<typeof olderReplica>;
  let scope: string;
  beforeAll(async () => {
    const prefix = `roll${++n}:`;
    store = await RedisStore.connect(redis.url, prefix);
    old = olderReplica(prefix);
  });
  afterAll(async () => { await store?.close(); });

  const reserve = (id: string, amountPico: bigint, leaseMs = 900_000) =>
    store.reserve({ project: scope, periodKey: w.key, periodStart: w.start, id, amountPico, limitPico: LIMIT, leaseMs, at: Date.now() }, Date.now());
  const reserved = () => store.reserved(scope, w.key, Date.now());

  it("an older replica does not admit beside this one's hold, and each hold counts once", async () => {
    scope = "acme";
    expect(await reserve("gen-new", 80n)).toEqual({ ok: true, spentPico: 0n, reservedPico: 80n });
    expect(await old.reserved(scope)).toBe(80n);
    expect(await old.reserve(scope, "gen-old", 80n)).toBe(false); // 160 of 100 held otherwise
    expect(await old.reserve(scope, "gen-old", 20n)).toBe(true);
    expect(await reserved()).toBe(100n);
    expect(await old.reserved(scope)).toBe(100n);
  });

  it("an older replica's hold settled by this release (its spool replayed here) no longer counts anywhere", async () => {
    await store.record(entry("gen-old", 15n), { project: scope, periodKey: w.key, id: "gen-old" });
    expect(await reserved()).toBe(80n);
    expect(await old.reserved(scope)).toBe(80n);
  });

  it("this release's hold settled by an older replica no longer counts here either", async () => {
    await old.settle(scope, "gen-new");
    expect(await reserved()).toBe(0n);
    expect(await reserve("next", 85n)).toEqual({ ok: true, spentPico: 15n, reservedPico: 85n });
  });

  it("a release here settles the hold for the older replicas too", async () => {
    await store.release({ project: scope, periodKey: w.key, id: "next" });
    expect(await old.reserved(scope)).toBe(0n);
    expect(await old.reserve(scope, "again", 85n)).toBe(true);
    await old.settle(scope, "again");
  });

  it("a renewed lease is renewed where the older replicas look too, so they do not sweep a hold still running", async () => {
    scope = "beta";
    expect((await reserve("long", 60n, 1_000)).ok).toBe(true);
    await store.renewHolds([{ project: scope, periodKey: w.key, id: "long", leaseMs: 3_600_000 }], Date.now());
    const [sec] = await raw.time();
    const [, , expires] = /^(\d+):(\d+)$/.exec((await raw.hget(`roll${n}:resv:${scope}:${w.key}`, "long"))!)!;
    expect(Number(expires) - Number(sec) * 1000).toBeGreaterThan(3_000_000);
    expect(await old.reserve(scope, "beside", 60n)).toBe(false);
  });
});
