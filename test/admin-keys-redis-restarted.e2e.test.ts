// Keys created through the admin API when Redis restarts without its data (SHUTDOWN NOSAVE, started again empty on
// the same port, store.require_persistence: false): the replicas' key polls FAIL while it is away, unlike a FLUSHALL
// (admin-keys-redis-lost.e2e.test.ts). Away for less than 2 x key_refresh_ms, the replicas were in step and write
// every key back; a replica cut off from Redis for longer while a key was revoked elsewhere writes back none.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { postJson } from "./helpers/gateway.ts";
import { partitionable } from "./helpers/partitionable-proxy.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { auth, chat, policyConfig } from "./helpers/policy-config.ts";
import { sleep, until } from "./helpers/until.ts";
import { sha256Hex } from "../core/keys/keys.ts";
import type { RunningGateway } from "../core/server.ts";

const ADMIN = "mg_admin_redis_restarted_keys_0001";
const PREFIX = "mgr:";
// Polls 1.5 s apart: a 1.5 s outage fails one, so the read that sees the loss comes more than 2 x 1.5 s after the
// last confirmed one (what used to count as out of step).
const KEY_REFRESH_MS = 1_500;
const AWAY_MS = 1_500;
type Replica = { gw: RunningGateway; log: CapturedLog; baseURL: string };

describe("API keys when Redis restarts without its data, two replicas", () => {
  let redis: TestRedis;
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
  const create = async (r: Replica, id: string) => {
    const res = await admin(r, "/keys", { project: "acme", id });
    expect(res.status, res.text).toBe(201);
    return res.json.key as string;
  };
  const status = async (r: Replica, key: string) => (await postJson(`${r.baseURL}/chat/completions`, chat(), auth(key))).status;
  const inRedis = async (key: string) => (await raw.sismember(`${PREFIX}apikeys`, sha256Hex(key))) === 1;
  const said = (r: Replica, what: RegExp) => r.log.records().filter((l) => what.test(l.msg));
  /** Redis gone without saving (its data lost), started again empty on the same port after `awayMs`. */
  const restartEmpty = async (awayMs: number) => {
    await raw.shutdown("NOSAVE").catch(() => undefined); // the connection closes before a reply
    await sleep(awayMs);
    await redis.restart({ aof: false, freshDir: true });
  };

  beforeAll(async () => {
    [redis, fake] = await Promise.all([startRedis({ aof: false }), startFakeOpenAI()]);
    config = {
      ...policyConfig(fake.baseUrl, {
        store: { kind: "redis", url: redis.url, prefix: PREFIX, require_persistence: false, timeout_ms: 250, probe_interval_ms: 100, key_refresh_ms: KEY_REFRESH_MS },
      }),
      admin_keys: [{ id: "ops", sha256: sha256Hex(ADMIN), scope: "write" }],
    };
    a = await start();
    b = await start();
    raw = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    raw.on("error", () => undefined); // refused while Redis is away
  }, 60_000);
  afterAll(async () => {
    raw?.disconnect();
    for (const r of running) await r.gw.close();
    await fake?.close();
    await redis?.stop();
  });

  it("Redis away 1.5 s (its polls failing) and back empty: both replicas write their keys back, and the keys keep working", async () => {
    const onA = await create(a, "made-on-a");
    const onB = await create(b, "made-on-b");
    for (const r of [a, b]) for (const k of [onA, onB]) expect(await status(r, k)).toBe(200);
    await sleep(KEY_REFRESH_MS + 200); // both replicas have polled since: in step

    await restartEmpty(AWAY_MS);

    await until("the keys written back to Redis", async () => ((await inRedis(onA)) && (await inRedis(onB)) ? true : undefined), 15_000);
    for (const r of [a, b]) {
      await until("the replica to serve again", async () => ((await fetch(`${r.gw.url}/readyz`)).status === 200 ? true : undefined));
      for (const k of [onA, onB]) expect(await status(r, k)).toBe(200);
      expect(said(r, /not written back/)).toEqual([]);
    }
    const restored = [...said(a, /written back$/), ...said(b, /written back$/)];
    expect(restored.flatMap((l) => l.keys).sort()).toEqual(["acme/made-on-a", "acme/made-on-b"]); // each once, by whichever got there first
    // A few polls later (and on a fresh replica, which has only Redis's copy), still there.
    await sleep(2 * KEY_REFRESH_MS);
    const fresh = await start();
    for (const r of [a, b, fresh]) for (const k of [onA, onB]) expect(await status(r, k)).toBe(200);
    await stop(fresh);
  }, 60_000);

  it("a replica cut off from Redis for longer than 2 x key_refresh_ms while a key was revoked writes nothing back after Redis restarted empty", async () => {
    const px = partitionable(redis.port);
    const c = await start({ ...config, store: { ...(config.store as object), url: await px.listen() } });
    const revoked = await create(a, "revoked-while-cut-off");
    const kept = await create(a, "known-to-c");
    expect(await status(c, revoked)).toBe(200);
    expect(await status(c, kept)).toBe(200);
    px.cut(); // c keeps its copy: both keys active
    const cutAt = Date.now();
    expect((await admin(a, "/keys/acme/revoked-while-cut-off/revoke", { reason: "leaked" })).status).toBe(200);
    await until("B to see the revocation", async () => ((await status(b, revoked)) === 401 ? true : undefined), 10_000);
    // Every replica that saw the revocation goes (a rolling deploy), and Redis restarts without its data.
    await stop(a);
    await stop(b);
    await restartEmpty(200);

    // c's polls fail from its first poll after the cut (up to key_refresh_ms later) for longer than 2 x key_refresh_ms.
    await sleep(cutAt + 4 * KEY_REFRESH_MS - Date.now());
    px.heal();
    await until("c to compare its keys with the emptied Redis", async () => (said(c, /^api keys: the store no longer h(o|e)ld/).length ? true : undefined), 15_000);
    expect(said(c, /^api keys: the store no longer h(o|e)ld/)).toMatchObject([{ level: 50, keys: expect.arrayContaining(["acme/revoked-while-cut-off", "acme/known-to-c"]) }]);
    expect(await inRedis(revoked)).toBe(false); // never resurrected
    expect(await inRedis(kept)).toBe(false); // its copy may be stale: named, to be created again
    expect(await status(c, revoked)).toBe(401);
    expect(await status(c, kept)).toBe(401);
    await stop(c);
    px.close();
  }, 60_000);
});
