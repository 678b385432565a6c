// The API key store's contract, on every backend (Redis: a real redis-server).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore } from "./memory.ts";
import { SqliteStore } from "./sqlite.ts";
import { RedisStore } from "./redis.ts";
import type { Store } from "./types.ts";
import type { StoredKey } from "./api-keys-types.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";

let redis: TestRedis;
let n = 0;
beforeAll(async () => { redis = await startRedis(); });
afterAll(async () => { await redis?.stop(); });

const key = (over: Partial<StoredKey> = {}): StoredKey => ({
  sha256: String(++n).padStart(64, "0"), id: `k${n}`, project: "acme", sandbox: false, hint: "abcd", createdAt: 1_700_000_000_000,
  expiresAt: null, revokedAt: null, ...over,
});

const backends: Record<string, () => Promise<Store>> = {
  memory: async () => new MemoryStore(),
  sqlite: async () => new SqliteStore(join(mkdtempSync(join(tmpdir(), "mg-keys-")), "g.db")),
  redis: () => RedisStore.connect(redis.url, `keys${++n}:`),
};

describe.each(Object.keys(backends))("%s API key store", (kind) => {
  let store: Store;
  beforeAll(async () => { store = await backends[kind]!(); });
  afterAll(async () => { await store?.close(); });
  /** A record as the store answers it: Redis counts each key's changes in rev (1 at creation). */
  const at = (k: StoredKey, rev: number): StoredKey => (kind === "redis" ? { ...k, rev } : k);

  it("creates keys once per project and id, and once per hash; every change moves the version", async () => {
    const v0 = await store.apiKeys.version();
    const a = key({ id: "ci", rateLimits: { rpm: 5 }, budget: { usd: "2.5", period: "day" }, name: "CI" });
    expect(await store.apiKeys.create(a)).toBe(true);
    const v1 = await store.apiKeys.version();
    expect(v1).not.toBe(v0);
    expect(await store.apiKeys.create(key({ id: "ci" }))).toBe(false); // same project and id
    expect(await store.apiKeys.create(key({ id: "ci", project: "other" }))).toBe(true); // another project may
    expect(await store.apiKeys.create({ ...key(), sha256: a.sha256 })).toBe(false); // same hash
    expect(await store.apiKeys.get(a.sha256)).toEqual(at(a, 1));
    expect(await store.apiKeys.get("f".repeat(64))).toBeUndefined();
    expect((await store.apiKeys.list()).filter((k) => k.id === "ci").map((k) => k.project).sort()).toEqual(["acme", "other"]);
  });

  it("updates only the fields given (undefined removes one), atomically, and says when there is no such key", async () => {
    const a = key({ rateLimits: { rpm: 9 }, name: "n" });
    await store.apiKeys.create(a);
    const before = await store.apiKeys.version();
    const revoked = await store.apiKeys.update(a.sha256, { revokedAt: 1_800_000_000_000, rateLimits: undefined });
    expect(revoked).toEqual(at({ ...a, revokedAt: 1_800_000_000_000, rateLimits: undefined }, 2));
    expect(await store.apiKeys.get(a.sha256)).not.toHaveProperty("rateLimits");
    expect((await store.apiKeys.get(a.sha256))!.name).toBe("n");
    expect(await store.apiKeys.version()).not.toBe(before);
    expect(await store.apiKeys.update("e".repeat(64), { name: "x" })).toBeUndefined();
  });

  it("rotates atomically: of concurrent rotations of one key exactly one adds a successor, the others are refused and write nothing", async () => {
    const old = key({ id: "race" });
    await store.apiKeys.create(old);
    const tries = [2, 3, 4].map((i) => key({ id: `race-r${i}`, rotatedFrom: "race" }));
    const results = await Promise.all(tries.map((t) => store.apiKeys.rotate(old.sha256, t, { replacedBy: t.id, expiresAt: 1_900_000_000_000 })));
    const won = results.filter((r) => r.ok);
    expect(won).toHaveLength(1);
    const winner = tries[results.findIndex((r) => r.ok)]!;
    expect(won[0]).toEqual({ ok: true, previous: at({ ...old, replacedBy: winner.id, expiresAt: 1_900_000_000_000 }, 2) });
    for (const r of results.filter((x) => !x.ok)) expect(r).toEqual({ ok: false, reason: "replaced", replacedBy: winner.id });
    const race = (await store.apiKeys.list()).filter((k) => k.id.startsWith("race"));
    expect(race.map((k) => k.id).sort()).toEqual(["race", winner.id].sort());
    expect(await store.apiKeys.get(old.sha256)).toMatchObject({ replacedBy: winner.id });

    // Refused, with nothing written: a revoked key, a taken id, a key that is not there.
    const revoked = key({ revokedAt: 1_800_000_000_000 });
    await store.apiKeys.create(revoked);
    expect(await store.apiKeys.rotate(revoked.sha256, key(), { replacedBy: "x" })).toEqual({ ok: false, reason: "revoked" });
    const live = key();
    await store.apiKeys.create(live);
    const v = await store.apiKeys.version();
    expect(await store.apiKeys.rotate(live.sha256, key({ id: winner.id }), { replacedBy: winner.id })).toEqual({ ok: false, reason: "taken" });
    expect(await store.apiKeys.get(live.sha256)).toEqual(at(live, 1));
    expect(await store.apiKeys.version()).toBe(v);
    expect(await store.apiKeys.rotate("d".repeat(64), key(), { replacedBy: "x" })).toEqual({ ok: false, reason: "missing" });
  });

  it("keeps the latest last use per key; touching is not a change", async () => {
    const v = await store.apiKeys.version();
    await store.apiKeys.touch(new Map([["a".repeat(64), 2000], ["b".repeat(64), 1000]]));
    await store.apiKeys.touch(new Map([["a".repeat(64), 1500], ["b".repeat(64), 3000]]));
    const used = await store.apiKeys.lastUsed();
    expect(used.get("a".repeat(64))).toBe(2000);
    expect(used.get("b".repeat(64))).toBe(3000);
    expect(await store.apiKeys.version()).toBe(v);
  });
});

it("redis: each change counts up the key's rev in the same write; a write-back keeps its state's rev only when higher", async () => {
  const store = await RedisStore.connect(redis.url, `keys${++n}:`);
  const a = key();
  await store.apiKeys.create(a);
  const fresh = key({ rotatedFrom: a.id });
  expect(await store.apiKeys.rotate(a.sha256, fresh, { replacedBy: fresh.id })).toMatchObject({ ok: true, previous: { rev: 2 } });
  expect(await store.apiKeys.get(fresh.sha256)).toMatchObject({ rev: 1 });
  const changes = await Promise.all([1, 2, 3, 4].map((i) => store.apiKeys.update(a.sha256, { name: `n${i}` })));
  expect(changes.map((k) => k!.rev).sort()).toEqual([3, 4, 5, 6]); // concurrent changes: each its own rev
  expect(await store.apiKeys.update(a.sha256, { name: "written back", rev: 9 })).toMatchObject({ rev: 9 });
  expect(await store.apiKeys.update(a.sha256, { name: "older copy", rev: 4 })).toMatchObject({ rev: 10 });
  const lost = key({ rev: 7 });
  await store.apiKeys.create(lost); // written back after a loss, with the rev it had
  expect(await store.apiKeys.get(lost.sha256)).toMatchObject({ rev: 7 });
  await store.close();
});

it(`sqlite: keys survive a restart of the store`, async () => {
  const path = join(mkdtempSync(join(tmpdir(), "mg-keys-")), "g.db");
  const s1 = new SqliteStore(path);
  const a = key();
  await s1.apiKeys.create(a);
  await s1.close();
  const s2 = new SqliteStore(path);
  expect(await s2.apiKeys.get(a.sha256)).toEqual(a);
  await s2.close();
});
