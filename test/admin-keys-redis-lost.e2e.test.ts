// Keys created through the admin API when Redis loses them: two replicas on a real redis-server with the ledger on a
// real PostgreSQL. Redis emptied under them, or an older backup of it put back: every key a replica knew is written
// back, revocations, rotations and later changes included (a key revoked or cut off since the backup stays so), so
// keys keep working on both replicas and the admin API still lists them. A replica that was cut off from Redis
// meanwhile writes back no key from its copy, which may be stale: a key revoked meanwhile stays gone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { postJson } from "./helpers/gateway.ts";
import { partitionable } from "./helpers/partitionable-proxy.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { startPostgres, type TestPostgres } from "./helpers/postgres.ts";
import { auth, chat, policyConfig } from "./helpers/policy-config.ts";
import { sleep, until } from "./helpers/until.ts";
import { sha256Hex } from "../core/keys/keys.ts";
import type { RunningGateway } from "../core/server.ts";

const ADMIN = "mg_admin_redis_lost_keys_test_0001";
const PREFIX = "mgk:";
const KEY_REFRESH_MS = 200;
type Replica = { gw: RunningGateway; log: CapturedLog; baseURL: string };

describe("API keys when Redis loses them, two replicas", () => {
  let redis: TestRedis;
  let postgres: TestPostgres;
  let fake: FakeOpenAI;
  let raw: Redis;
  let a: Replica;
  let b: Replica;
  let config: Record<string, unknown>;
  const running = new Set<Replica>();
  const start = async (c = config) => {
    const r = await startLoggedGateway(c);
    running.add(r);
    return r;
  };
  const stop = async (r: Replica) => {
    running.delete(r);
    await r.gw.close();
  };

  const admin = (r: Replica, path: string, body: unknown = {}) => postJson(`${r.gw.url}/admin/v1${path}`, body, { authorization: `Bearer ${ADMIN}` });
  const patch = (r: Replica, path: string, body: unknown) => fetch(`${r.gw.url}/admin/v1${path}`, {
    method: "PATCH", body: JSON.stringify(body), headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
  });
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
    config = {
      ...policyConfig(fake.baseUrl, {
        store: { kind: "redis", url: redis.url, prefix: PREFIX, timeout_ms: 250, key_refresh_ms: KEY_REFRESH_MS, ledger: { kind: "postgres", url: await postgres.createDatabase("keys") } },
      }),
      admin_keys: [{ id: "ops", sha256: sha256Hex(ADMIN), scope: "write" }],
    };
    a = await start();
    b = await start();
    raw = new Redis(redis.url);
  }, 60_000);
  afterAll(async () => {
    raw?.disconnect();
    for (const r of running) await r.gw.close();
    await fake?.close();
    await redis?.stop();
    await postgres?.stop();
  });

  /** Redis's data as it is now, and putting it back (an older backup restored). */
  const snapshot = async () => Promise.all((await raw.keys(`${PREFIX}*`)).map(async (k) => ({ k, v: (await raw.dumpBuffer(k))!, ttl: await raw.pttl(k) })));
  const restore = async (backup: Awaited<ReturnType<typeof snapshot>>) => {
    // In one transaction, as a restarted Redis loads its backup before serving: a replica writing back between the
    // delete and the restores made RESTORE fail (BUSYKEY) now and then.
    const tx = raw.multi().del(...(await raw.keys(`${PREFIX}*`)));
    for (const s of backup) tx.restore(s.k, s.ttl > 0 ? s.ttl : 0, s.v);
    for (const [err] of (await tx.exec()) ?? []) if (err) throw err;
  };

  it("Redis emptied under the replicas: the keys come back, revoked and rotated ones as they were", async () => {
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

    // A FLUSHALL (or a failover to an empty replica): both replicas, in step with Redis until then, notice at their
    // next poll (the epoch is gone), rebuild spend, and put the keys they know back.
    await raw.flushall();
    // Wait for every write-back to end, not for the fifth key: B may not have polled between the rotation and the
    // FLUSHALL (on a loaded machine its poll fell between the revocation and the rotation), so it writes `rotating`
    // back as it knew it, active, and A, which made the rotation, tightens it right after creating the successor,
    // in the same write-back. A replica logs its write-back once its last write is answered, and the keys are each
    // created once, so 5 restored logged means both are done.
    const said = () => [...a.log.records(), ...b.log.records()].filter((l) => l.msg.startsWith("api keys: the store no longer held keys"));
    await until("the keys written back to Redis", async () => ((await held()).length === 5 && said().reduce((n, l) => n + l.restored, 0) >= 5 ? true : undefined));
    const inRedis = async (key: string) => raw.hmget(`${PREFIX}apikey:${sha256Hex(key)}`, "revokedAt", "replacedBy");
    expect(await inRedis(revoked)).toEqual([expect.stringMatching(/^\d+$/), null]); // never resurrected
    expect(await inRedis(rotating)).toEqual([expect.stringMatching(/^\d+$/), '"rotating-r2"']);
    for (const r of [a, b]) {
      await until("the replica to serve again", async () => ((await fetch(`${r.gw.url}/readyz`)).status === 200 ? true : undefined));
      // A replica that wrote `rotating` back active serves it so until its next poll (store.key_refresh_ms) takes A's
      // revocation, as it takes any change made on another replica: wait for that poll, not a fixed time.
      await until("the replica to take the rotation", async () => ((await status(r, rotating)) === 401 ? true : undefined));
      expect(await status(r, kept)).toBe(200);
      expect(await status(r, fromB)).toBe(200);
      expect(await status(r, successor)).toBe(200);
      expect(await status(r, revoked)).toBe(401); // never resurrected
      expect(await listed(r)).toEqual({ fromCache: false, keys: { kept: "active", "made-on-b": "active", revoked: "revoked", rotating: "revoked", "rotating-r2": "active" } });
    }
    expect(said().length).toBeGreaterThan(0);
    expect(said().every((l) => l.level === 40)).toBe(true);
    expect(said().reduce((n, l) => n + l.restored, 0)).toBe(5); // each key created once, by whichever replica got there first
  }, 60_000);

  it("an older backup of Redis put back: keys made since come back, a key revoked since stays revoked", async () => {
    const old = await create(a, "in-backup");
    expect(await status(b, old)).toBe(200);
    const backup = await snapshot();

    expect((await admin(b, "/keys/acme/in-backup/revoke")).status).toBe(200);
    const later = await create(b, "after-backup");
    await until("A to see the revocation", async () => ((await status(a, old)) === 401 ? true : undefined));

    await restore(backup);
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

  it("an older backup of Redis put back: a key cut off by a later expiry stays cut off, a lowered rate limit stays low", async () => {
    const cut = await create(a, "cut-off");
    const limited = await create(a, "limited");
    expect((await patch(a, "/keys/acme/limited", { rate_limits: { rpm: 1000 } })).status).toBe(200);
    const backup = await snapshot();
    expect((await patch(a, "/keys/acme/cut-off", { expires_at: new Date(Date.now() + 1000).toISOString() })).status).toBe(200);
    expect((await patch(a, "/keys/acme/limited", { rate_limits: { rpm: 1 } })).status).toBe(200);
    await until("the expiry to pass", async () => ((await status(a, cut)) === 401 ? true : undefined));
    await until("B to see both changes", async () => ((await status(b, cut)) === 401 ? true : undefined));

    await restore(backup);
    // Each replica's lines since the restore, counted per replica: whichever polls first writes back and the other
    // may find nothing left to do, so a count over both lists together would skip the first one's new lines.
    const since = new Map([a, b].map((r) => [r, r.log.lines.length]));
    const named = () => [a, b].flatMap((r) => r.log.records().slice(since.get(r)))
      .filter((l) => l.msg.startsWith("api keys: the store no longer held keys")).flatMap((l) => l.keys);
    // The warning comes once the write-back's last write is answered: wait for it, not for the first line after.
    await until("the newer states written back", async () => (named().includes("acme/cut-off") && named().includes("acme/limited") ? true : undefined));
    await until("the expiry back in Redis", async () => ((await raw.hget(`${PREFIX}apikey:${sha256Hex(cut)}`, "expiresAt")) !== "null" ? true : undefined));
    for (const r of [a, b]) {
      expect(await status(r, cut)).toBe(401);
      const [first, second] = [await status(r, limited), await status(r, limited)];
      expect([first, second]).toContain(429); // rpm 1, not the backup's 1000
    }
    expect(named()).toEqual(expect.arrayContaining(["acme/cut-off", "acme/limited"]));
  }, 60_000);

  it("a replica cut off from Redis while a key was revoked does not bring it back after Redis lost its data", async () => {
    const px = partitionable(redis.port);
    const c = await start({ ...config, store: { ...(config.store as object), url: await px.listen() } });
    const revoked = await create(a, "revoked-while-cut-off");
    const kept = await create(a, "known-to-c");
    expect(await status(c, revoked)).toBe(200);
    expect(await status(c, kept)).toBe(200);
    px.cut(); // c keeps its copy: both keys active
    const cutAt = Date.now();
    expect((await admin(a, "/keys/acme/revoked-while-cut-off/revoke", { reason: "leaked" })).status).toBe(200);
    await until("B to see the revocation", async () => ((await status(b, revoked)) === 401 ? true : undefined));
    // Every replica that saw the revocation goes (a rolling deploy), Redis loses its data, a new replica starts.
    await stop(a);
    await stop(b);
    await raw.flushall();
    const fresh = await start();
    expect(await status(fresh, revoked)).toBe(401);
    const said = () => c.log.records().filter((l) => /^api keys: the store no longer h(o|e)ld/.test(l.msg));
    expect(said()).toEqual([]);

    // Cut off for longer than 2 x key_refresh_ms after its last poll, and a FLUSHALL is no restart (judged by the
    // poll that sees it): c cannot know what changed meanwhile.
    await sleep(cutAt + 2 * KEY_REFRESH_MS + 100 - Date.now());
    px.heal();
    await until("c to compare its keys with the emptied Redis", async () => (said().length ? true : undefined));
    expect(await raw.sismember(`${PREFIX}apikeys`, sha256Hex(revoked))).toBe(0);
    for (const r of [fresh, c]) expect(await status(r, revoked)).toBe(401); // never resurrected
    // Its copy may be stale, so the other key is not written back either: named, to be created again.
    expect(said()).toMatchObject([{ level: 50, keys: expect.arrayContaining(["acme/revoked-while-cut-off", "acme/known-to-c"]) }]);
    expect(await status(c, kept)).toBe(401);
    await stop(c);
    px.close();
  }, 60_000);
});
