// Keys created through the admin API when Redis loses them: two replicas on a real redis-server with the ledger on a
// real PostgreSQL. Redis killed and started again on an empty directory (appendonly), or an older backup of it put
// back: every key a replica knew is written back, revocations and rotations included (a key revoked since the
// backup stays revoked), so keys keep working on both replicas and the admin API still lists them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { postJson } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { startPostgres, type TestPostgres } from "./helpers/postgres.ts";
import { auth, chat, policyConfig } from "./helpers/policy-config.ts";
import { until } from "./helpers/until.ts";
import { sha256Hex } from "../core/keys/keys.ts";
import type { RunningGateway } from "../core/server.ts";

const ADMIN = "mg_admin_redis_lost_keys_test_0001";
const PREFIX = "mgk:";
type Replica = { gw: RunningGateway; log: CapturedLog; baseURL: string };

describe("API keys when Redis loses them, two replicas", () => {
  let redis: TestRedis;
  let postgres: TestPostgres;
  let fake: FakeOpenAI;
  let raw: Redis;
  let a: Replica;
  let b: Replica;

  const admin = (r: Replica, path: string, body: unknown = {}) => postJson(`${r.gw.url}/admin/v1${path}`, body, { authorization: `Bearer ${ADMIN}` });
  const create = async (r: Replica, id: string) => {
    const res = await admin(r, "/keys", { project: "acme", id });
    expect(res.status, res.text).toBe(201);
    return res.json.key as string;
  };
  const status = async (r: Replica, key: string) => (await postJson(`${r.baseURL}/chat/completions`, chat(), auth(key))).status;
  const listed = async (r: Replica) => {
    const res = await fetch(`${r.gw.url}/admin/v1/keys?project=acme&source=api`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const body = (await res.json()) as { keys: { id: string; status: string }[]; from_cache: boolean };
    return { fromCache: body.from_cache, keys: Object.fromEntries(body.keys.map((k) => [k.id, k.status])) };
  };
  /** The key hashes Redis holds under the gateways' prefix. */
  const held = () => raw.smembers(`${PREFIX}apikeys`);

  beforeAll(async () => {
    [redis, postgres, fake] = await Promise.all([startRedis(), startPostgres(), startFakeOpenAI()]);
    const config = {
      ...policyConfig(fake.baseUrl, {
        store: { kind: "redis", url: redis.url, prefix: PREFIX, timeout_ms: 250, key_refresh_ms: 200, ledger: { kind: "postgres", url: await postgres.createDatabase("keys") } },
      }),
      admin_keys: [{ id: "ops", sha256: sha256Hex(ADMIN), scope: "write" }],
    };
    a = await startLoggedGateway(config);
    b = await startLoggedGateway(config);
    raw = new Redis(redis.url);
  }, 60_000);
  afterAll(async () => {
    raw?.disconnect();
    await a?.gw.close();
    await b?.gw.close();
    await fake?.close();
    await redis?.stop();
    await postgres?.stop();
  });

  it("Redis killed and started on an empty directory: the keys come back, revoked and rotated ones as they were", async () => {
    const kept = await create(a, "kept");
    const fromB = await create(b, "made-on-b"); // A has never seen it
    const revoked = await create(a, "revoked");
    const rotating = await create(a, "rotating");
    expect(await status(b, revoked)).toBe(200); // B caches it unrevoked...
    expect((await admin(a, "/keys/acme/revoked/revoke")).status).toBe(200);
    const rotated = await admin(a, "/keys/acme/rotating/rotate", { overlap_seconds: 0 });
    expect(rotated.status, rotated.text).toBe(201);
    const successor = rotated.json.key as string;
    await until("B to see the revocation", async () => ((await status(b, revoked)) === 401 ? true : undefined)); // ...then revoked
    expect(await held()).toHaveLength(5);

    await redis.kill();
    await redis.restart({ aof: true, freshDir: true });
    // Both replicas notice (the epoch is gone), rebuild spend, and put the keys they know back.
    await until("the keys written back to Redis", async () => ((await held()).length === 5 ? true : undefined));
    for (const r of [a, b]) {
      await until("the replica to serve again", async () => ((await fetch(`${r.gw.url}/readyz`)).status === 200 ? true : undefined));
      expect(await status(r, kept)).toBe(200);
      expect(await status(r, fromB)).toBe(200);
      expect(await status(r, successor)).toBe(200);
      expect(await status(r, revoked)).toBe(401); // never resurrected
      expect(await status(r, rotating)).toBe(401);
      expect(await listed(r)).toEqual({ fromCache: false, keys: { kept: "active", "made-on-b": "active", revoked: "revoked", rotating: "revoked", "rotating-r2": "active" } });
    }
    const said = [...a.log.records(), ...b.log.records()].filter((l) => l.msg.startsWith("api keys: the store no longer held keys"));
    expect(said.length).toBeGreaterThan(0);
    expect(said.every((l) => l.level === 40)).toBe(true);
    expect(said.reduce((n, l) => n + l.restored, 0)).toBe(5); // each key created once, by whichever replica got there first
  }, 60_000);

  it("an older backup of Redis put back: keys made since come back, a key revoked since stays revoked", async () => {
    const old = await create(a, "in-backup");
    expect(await status(b, old)).toBe(200);
    const keys = await raw.keys(`${PREFIX}*`);
    const backup = await Promise.all(keys.map(async (k) => ({ k, v: (await raw.dumpBuffer(k))!, ttl: await raw.pttl(k) })));

    expect((await admin(b, "/keys/acme/in-backup/revoke")).status).toBe(200);
    const later = await create(b, "after-backup");
    await until("A to see the revocation", async () => ((await status(a, old)) === 401 ? true : undefined));

    await raw.del(...(await raw.keys(`${PREFIX}*`)));
    for (const s of backup) await raw.restore(s.k, s.ttl > 0 ? s.ttl : 0, s.v);
    expect(await raw.hget(`${PREFIX}apikey:${sha256Hex(old)}`, "revokedAt")).toBe("null"); // the backup's copy: unrevoked

    await until("the revocation written back", async () => ((await raw.hget(`${PREFIX}apikey:${sha256Hex(old)}`, "revokedAt")) !== "null" ? true : undefined));
    await until("the newer key written back", async () => ((await raw.sismember(`${PREFIX}apikeys`, sha256Hex(later))) === 1 ? true : undefined));
    for (const r of [a, b]) {
      // A few refreshes later (store.key_refresh_ms 200), still as it should be.
      await new Promise((res) => setTimeout(res, 600));
      expect(await status(r, old)).toBe(401);
      expect(await status(r, later)).toBe(200);
      expect((await listed(r)).keys).toMatchObject({ "in-backup": "revoked", "after-backup": "active" });
    }
  }, 60_000);
});
