// A rolling upgrade (or a rollback) runs replicas of two releases on one Redis. Both keep budget holds in one layout,
// the previous release's: `resv:<scope>:<periodKey>` (id -> "amount:expiresAt"), in the hash of the period the budget
// had at admission, settled, released and renewed there. So neither admits past what the other holds, a hold settled
// by either is gone for both, and each hold is stored once. The older replica here runs that release's own scripts
// (1a3cfb0^, verbatim) on the same Redis. Rate windows keep their tat key, and the limit key beside it, as the
// previous release writes and reads them (plain numbers; when a window was written is a third key it never reads), so
// replicas of this release, of the previous one and of the one before that charge the same window.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { RedisStore } from "./redis.ts";
import { periodOf } from "./periods.ts";
import { windowState } from "./gcra.ts";
import type { LedgerRecord } from "../contracts/ledger-reader.ts";
import type { Period } from "./types.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";
import { awayFromPeriodEnd } from "../../test/helpers/period-end.ts";
import { OLDER_RATE_LIMIT, PREVIOUS_RATE_ADJUST, PREVIOUS_RATE_LIMIT, PREVIOUS_RATE_STATE } from "./redis-released-rate-scripts.testkit.ts";

/** The previous release's RESERVE, RESERVED and RENEW as it ran them; its record and release HDEL the hold. */
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
-- Only ever lengthened: a short lease must not cut the key from under a longer one held in it (a video job's).
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
const OLD_RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 1, #KEYS do
  local id, lease = ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  local v = redis.call('HGET', KEYS[i], id)
  if v then
    local amount, expires = string.match(v, '^(%d+):(%d+)$')
    if amount and tonumber(expires) > now and tonumber(expires) < now + lease then
      redis.call('HSET', KEYS[i], id, amount .. ':' .. string.format('%.0f', now + lease))
      if redis.call('PTTL', KEYS[i]) < lease + 60000 then redis.call('PEXPIRE', KEYS[i], lease + 60000) end
    end
  end
end
return 1
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
// Holds are made under the current period and looked for under it again: each test runs within one day.
beforeEach(() => awayFromPeriodEnd("day"));

const LIMIT = 100n;

/** A replica of the older release on the same Redis and prefix, its budget of `period`. */
function olderReplica(prefix: string, period: Period = "month") {
  const w = () => periodOf(period, Date.now());
  const resv = (scope: string) => `${prefix}resv:${scope}:${w().key}`;
  return {
    async reserve(scope: string, id: string, amount: bigint): Promise<boolean> {
      const [ok] = await raw.eval(OLD_RESERVE, 2, `${prefix}spend:${scope}:${w().key}`, resv(scope), id, amount.toString(), LIMIT.toString(), 900_000) as number[];
      return Number(ok) === 1;
    },
    async reserved(scope: string): Promise<bigint> {
      return BigInt(await raw.eval(OLD_RESERVED, 1, resv(scope)) as string);
    },
    async renew(scope: string, id: string, leaseMs: number): Promise<void> {
      await raw.eval(OLD_RENEW, 1, resv(scope), id, leaseMs);
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
  let prefix: string;
  let old: ReturnType<typeof olderReplica>;
  let scope: string;
  let atConnect: string[];
  beforeAll(async () => {
    prefix = `roll${++n}:`;
    store = await RedisStore.connect(redis.url, prefix);
    atConnect = await raw.keys(`${prefix}*`);
    old = olderReplica(prefix);
  });
  afterAll(async () => { await store?.close(); });

  const reserve = (id: string, amountPico: bigint, leaseMs = 900_000, period: Period = "month") => {
    const w = periodOf(period, Date.now());
    return store.reserve({ project: scope, periodKey: w.key, periodStart: w.start, id, amountPico, limitPico: LIMIT, leaseMs, at: Date.now() }, Date.now());
  };
  const month = () => periodOf("month", Date.now()).key;
  const reserved = () => store.reserved(scope, month(), Date.now());

  it("neither release admits past the other's holds", async () => {
    scope = "acme";
    expect(await reserve("gen-new", 80n)).toEqual({ ok: true, spentPico: 0n, reservedPico: 80n });
    expect(await old.reserved(scope)).toBe(80n);
    expect(await old.reserve(scope, "gen-old", 80n)).toBe(false); // 160 of 100 held otherwise
    expect(await old.reserve(scope, "gen-old", 20n)).toBe(true);
    expect(await reserved()).toBe(100n);
    expect(await old.reserved(scope)).toBe(100n);
    expect(await reserve("more", 1n)).toEqual({ ok: false, spentPico: 0n, reservedPico: 100n });
  });

  it("keeps each hold once, where and as the previous release keeps it", async () => {
    // Nothing else was written for them: no second copy to read on every reserve, nor to keep in memory.
    const written = (await raw.keys(`${prefix}*`)).filter((k) => !atConnect.includes(k));
    expect(written).toEqual([`${prefix}resv:acme:${month()}`]);
    const holds = await raw.hgetall(`${prefix}resv:acme:${month()}`);
    expect(Object.keys(holds).sort()).toEqual(["gen-new", "gen-old"]);
    expect(holds["gen-new"]).toMatch(/^80:\d+$/);
    expect(holds["gen-old"]).toMatch(/^20:\d+$/);
  });

  it("an older replica's hold settled by this release (its spool replayed here) no longer counts anywhere", async () => {
    await store.record(entry("gen-old", 15n), { project: scope, periodKey: month(), id: "gen-old" });
    expect(await reserved()).toBe(80n);
    expect(await old.reserved(scope)).toBe(80n);
  });

  it("this release's hold settled by an older replica no longer counts here either", async () => {
    await old.settle(scope, "gen-new");
    expect(await reserved()).toBe(0n);
    expect(await reserve("next", 85n)).toEqual({ ok: true, spentPico: 15n, reservedPico: 85n });
  });

  it("a release here settles the hold for the older replicas too", async () => {
    await store.release({ project: scope, periodKey: month(), id: "next" });
    expect(await old.reserved(scope)).toBe(0n);
    expect(await old.reserve(scope, "again", 85n)).toBe(true);
    await old.settle(scope, "again");
  });

  it("a lease renewed by either release is renewed for both", async () => {
    scope = "beta";
    const expiresIn = async (id: string) => {
      const [sec] = await raw.time();
      const [, , expires] = /^(\d+):(\d+)$/.exec((await raw.hget(`${prefix}resv:${scope}:${month()}`, id))!)!;
      return Number(expires) - Number(sec) * 1000;
    };
    expect((await reserve("long", 60n, 1_000)).ok).toBe(true);
    await store.renewHolds([{ project: scope, periodKey: month(), id: "long", leaseMs: 3_600_000 }], Date.now());
    expect(await expiresIn("long")).toBeGreaterThan(3_000_000);
    expect(await old.reserve(scope, "beside", 60n)).toBe(false);

    expect((await reserve("short", 40n, 1_000)).ok).toBe(true);
    await old.renew(scope, "short", 3_600_000);
    expect(await expiresIn("short")).toBeGreaterThan(3_000_000);
    expect(await reserved()).toBe(100n);
  });

  it("counts an older replica's hold made under the day once a reload made the budget weekly here", async () => {
    scope = "gamma";
    const daily = olderReplica(prefix, "day");
    expect(await daily.reserve(scope, "gen-day", 70n)).toBe(true);
    expect(await reserve("gen-week", 40n, 900_000, "week")).toEqual({ ok: false, spentPico: 0n, reservedPico: 70n });
    expect(await store.reserved(scope, periodOf("week", Date.now()).key, Date.now())).toBe(70n);
    await daily.settle(scope, "gen-day");
    expect((await reserve("gen-week", 40n, 900_000, "week")).ok).toBe(true);
  });
});

describe("Redis rate windows with replicas of the previous release beside it, both ways", () => {
  let store: RedisStore;
  let prefix: string;
  beforeAll(async () => {
    prefix = `prev${++n}:`;
    store = await RedisStore.connect(redis.url, prefix);
  });
  afterAll(async () => { await store?.close(); });
  const keys = (key: string) => [`${prefix}rl:${key}`, `${prefix}rl-limit:${key}`];
  /** A replica of the previous release on the same Redis and prefix, running its own scripts. */
  const previous = {
    async charge(key: string, limit: number, cost = 1): Promise<boolean> {
      return Number(((await raw.eval(PREVIOUS_RATE_LIMIT, 2, ...keys(key), limit, cost)) as unknown[])[0]) === 1;
    },
    /** What its GET /admin/v1/rate-limits showed for the window. */
    async state(key: string, limit: number) {
      const [now, tat] = ((await raw.eval(PREVIOUS_RATE_STATE, 2, ...keys(key), limit)) as string[]).map(Number);
      return windowState({ key, limit, cost: 0 }, Math.max(tat!, now!), now!);
    },
    async adjust(key: string, limit: number, delta: number): Promise<void> {
      await raw.eval(PREVIOUS_RATE_ADJUST, 2, ...keys(key), limit, delta);
    },
  };
  const charge = async (key: string, limit: number) => (await store.rateLimit([{ key, limit, cost: 1 }], Date.now())).ok;
  const state = async (key: string, limit: number) => (await store.rateState([{ key, limit }], Date.now()))[0]!;

  it("a previous-release replica charges, shows and corrects windows this release wrote, in one count with it", async () => {
    expect([await charge("a", 4), await charge("a", 4)]).toEqual([true, true]);
    expect(await previous.charge("a", 4)).toBe(true);
    expect((await previous.state("a", 4)).remaining).toBe(1);
    await previous.adjust("a", 4, -1); // its tpm correction of a request that used less
    expect((await state("a", 4)).remaining).toBe(2);
    expect([await charge("a", 4), await previous.charge("a", 4)]).toEqual([true, true]);
    expect(await previous.charge("a", 4)).toBe(false);
    expect(await charge("a", 4)).toBe(false);
  });

  it("this release charges and shows windows the previous release wrote, in one count with it", async () => {
    expect([await previous.charge("b", 100), await previous.charge("b", 100)]).toEqual([true, true]);
    expect((await state("b", 100)).remaining).toBe(98);
    expect(await charge("b", 100)).toBe(true);
    expect((await previous.state("b", 100)).remaining).toBe(97);
  });

  it("a limit changed on a replica of either release is read at the other's limit", async () => {
    expect([await previous.charge("c", 2), await previous.charge("c", 2), await previous.charge("c", 2)]).toEqual([true, true, false]);
    const raised: boolean[] = [];
    for (let i = 0; i < 10; i++) raised.push(await charge("c", 100));
    expect(raised).toEqual(Array(10).fill(true));
    // 12 used: 6 minutes at rpm 2 for the previous-release replica not reloaded yet.
    expect(await previous.charge("c", 2)).toBe(false);
    expect((await previous.state("c", 2)).resetMs).toBeGreaterThan(5.5 * 60_000);
    expect(await charge("c", 2)).toBe(false);
  });

  it("keeps the limit as the previous release reads it, and its write time in a key that expires and goes with the window", async () => {
    const [tk, lk] = keys("d");
    const atk = `${prefix}rl-at:d`;
    expect(await charge("d", 100)).toBe(true);
    expect(await raw.get(lk!)).toBe("100");
    const windowTtl = await raw.pttl(tk!);
    const atTtl = await raw.pttl(atk);
    expect(atTtl).toBeGreaterThan(0);
    expect(atTtl).toBeLessThanOrEqual(windowTtl);
    await store.rateAdjust("d", 100, -1, Date.now()); // nothing owed: the window is gone, all of it
    expect(await raw.exists(tk!, lk!, atk)).toBe(0);
  });
});

describe("Redis rate windows with replicas of the release before the previous one beside it, and of this one with other limits", () => {
  let store: RedisStore;
  let other: RedisStore;
  let prefix: string;
  beforeAll(async () => {
    prefix = `rate${++n}:`;
    store = await RedisStore.connect(redis.url, prefix);
    other = await RedisStore.connect(redis.url, prefix);
  });
  afterAll(async () => {
    await store?.close();
    await other?.close();
  });
  const older = async (key: string, limit: number) => Number(((await raw.eval(OLDER_RATE_LIMIT, 1, `${prefix}rl:${key}`, limit, 1)) as unknown[])[0]) === 1;
  const charge = async (s: RedisStore, key: string, limit: number) => (await s.rateLimit([{ key, limit, cost: 1 }], Date.now())).ok;

  it("both releases charge one window at an unchanged limit", async () => {
    expect([await charge(store, "w1", 4), await older("w1", 4), await charge(store, "w1", 4), await older("w1", 4)]).toEqual([true, true, true, true]);
    expect(await older("w1", 4)).toBe(false);
    expect(await charge(store, "w1", 4)).toBe(false);
  });

  it("a replica with the raised limit reads the window at it; one still on the old limit keeps the old pace", async () => {
    expect([await charge(store, "w2", 2), await charge(store, "w2", 2), await charge(store, "w2", 2)]).toEqual([true, true, false]);
    const raised: boolean[] = [];
    for (let i = 0; i < 10; i++) raised.push(await charge(other, "w2", 100));
    expect(raised).toEqual(Array(10).fill(true));
    // 12 used: 6 minutes at rpm 2 for the replica not reloaded yet.
    expect(await charge(store, "w2", 2)).toBe(false);
    expect((await store.rateState([{ key: "w2", limit: 2 }], Date.now()))[0]!.resetMs).toBeGreaterThan(5.5 * 60_000);
  });
});
