// Keys created through the admin API when Redis restarts without its data (SHUTDOWN NOSAVE, started again empty on
// the same port, store.require_persistence: false): the replicas' key polls FAIL while it is away, unlike a FLUSHALL
// (admin-keys-redis-lost.e2e.test.ts). A replica is in step when Redis restarted within 3 x key_refresh_ms + 1 s of its
// last confirmed read (INFO server's uptime), however late it sees the loss, and writes every key back: a Redis back
// within 2 x key_refresh_ms of going away keeps the keys whatever the poll phase. A replica cut off from Redis while a
// key was revoked elsewhere, Redis restarting later than that, writes back none, however soon the partition heals.
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
// Polls 1.5 s apart: a restart within 3 x 1.5 s + 1 s = 5.5 s of a replica's last read finds it in step.
const KEY_REFRESH_MS = 1_500;
const AWAY_MS = 1_000;
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
  /** A key poll now, as the replica's timer makes every key_refresh_ms: when its last read was, or that a poll failed. */
  const poll = (r: Replica) => r.gw.gateway.apiKeys.refresh();
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

  it("Redis away 1 s (its polls failing) and back empty: both replicas write their keys back, and the keys keep working", async () => {
    const onA = await create(a, "made-on-a");
    const onB = await create(b, "made-on-b");
    for (const r of [a, b]) for (const k of [onA, onB]) expect(await status(r, k)).toBe(200);
    await Promise.all([poll(a), poll(b)]); // both have read Redis just before it goes (their timers poll at any phase)

    await raw.shutdown("NOSAVE").catch(() => undefined);
    await Promise.all([poll(a), poll(b)]); // a poll fails
    expect(said(a, /refresh failed/).length && said(b, /refresh failed/).length).toBeGreaterThan(0);
    await sleep(AWAY_MS);
    await redis.restart({ aof: false, freshDir: true });

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

  it("Redis away 1.5 x key_refresh_ms, going at no particular point between the replicas' polls, and back empty: both replicas keep every key", async () => {
    const onA = await create(a, "made-on-a-unaligned");
    const onB = await create(b, "made-on-b-unaligned");
    for (const r of [a, b]) for (const k of [onA, onB]) expect(await status(r, k)).toBe(200);
    const before = [a, b].map((r) => said(r, /written back$/).length);
    // The replicas poll on their own timers: Redis goes at a random point of their poll interval, so its last read
    // before the outage may be up to key_refresh_ms old (in the 1 s test above both have just read it).
    await sleep(Math.random() * KEY_REFRESH_MS);
    await raw.shutdown("NOSAVE").catch(() => undefined);
    await sleep(1.5 * KEY_REFRESH_MS);
    await redis.restart({ aof: false, freshDir: true });

    await until("the keys written back to Redis", async () => ((await inRedis(onA)) && (await inRedis(onB)) ? true : undefined), 15_000);
    for (const r of [a, b]) {
      await until("the replica to serve again", async () => ((await fetch(`${r.gw.url}/readyz`)).status === 200 ? true : undefined));
      for (const k of [onA, onB]) expect(await status(r, k)).toBe(200);
      expect(said(r, /not written back/)).toEqual([]);
    }
    const restored = [a, b].flatMap((r, i) => said(r, /written back$/).slice(before[i]));
    expect(restored.flatMap((l) => l.keys)).toEqual(expect.arrayContaining(["acme/made-on-a-unaligned", "acme/made-on-b-unaligned"]));
    const fresh = await start();
    for (const k of [onA, onB]) expect(await status(fresh, k)).toBe(200);
    await stop(fresh);
  }, 60_000);

  it("a replica cut off from Redis while a key was revoked elsewhere writes nothing back when Redis restarted empty more than 3 x key_refresh_ms + 1 s after its last read, however soon the partition heals", async () => {
    // c polls every 2 s; it is cut off just after a poll. Redis restarts empty 7.3 s after the cut (past c's 3 x 2 s
    // + 1 s) and the partition heals at once: revoked-while-cut-off was revoked on a while c was cut off, and a and b
    // are gone.
    const C_REFRESH_MS = 2_000;
    const px = partitionable(redis.port);
    const c = await start({ ...config, store: { ...(config.store as object), url: await px.listen(), key_refresh_ms: C_REFRESH_MS } });
    const revoked = await create(a, "revoked-while-cut-off");
    const kept = await create(a, "known-to-c");
    const marker = await create(a, "marks-c-polling");
    for (const k of [revoked, kept, marker]) expect(await status(c, k)).toBe(200);
    // c's poll is seen by it taking a revocation: cut at once after it.
    expect((await admin(a, "/keys/acme/marks-c-polling/revoke", { reason: "poll marker" })).status).toBe(200);
    await until("c to poll", async () => ((await status(c, marker)) === 401 ? true : undefined), 10_000, 10);
    px.cut();
    const cutAt = Date.now();
    expect((await admin(a, "/keys/acme/revoked-while-cut-off/revoke", { reason: "leaked" })).status).toBe(200);
    await until("B to see the revocation", async () => ((await status(b, revoked)) === 401 ? true : undefined), 10_000);
    // Every replica that saw the revocation goes (a rolling deploy); Redis restarts without its data, later.
    await stop(a);
    await stop(b);
    await raw.shutdown("NOSAVE").catch(() => undefined);
    await sleep(cutAt + 3 * C_REFRESH_MS + 1_000 + 300 - Date.now());
    await redis.restart({ aof: false, freshDir: true });
    px.heal();

    await until("c to compare its keys with the emptied Redis", async () => (said(c, /^api keys: the store no longer h(o|e)ld/).length ? true : undefined), 15_000);
    expect(said(c, /^api keys: the store no longer h(o|e)ld/)).toMatchObject([{ level: 50, keys: expect.arrayContaining(["acme/revoked-while-cut-off", "acme/known-to-c"]) }]);
    expect(await inRedis(revoked)).toBe(false); // never resurrected
    expect(await inRedis(kept)).toBe(false); // its copy may be stale: named, to be created again
    expect(await status(c, revoked)).toBe(401);
    expect(await status(c, kept)).toBe(401);
    const fresh = await start();
    expect(await status(fresh, revoked)).toBe(401);
    await stop(fresh);
    await stop(c);
    px.close();
  }, 60_000);

  it("a replica cut off while Redis restarted empty within 2 x key_refresh_ms of its last read writes its keys back when it sees the loss, later than that", async () => {
    const px = partitionable(redis.port);
    const c = await start({ ...config, store: { ...(config.store as object), url: await px.listen() } });
    const onC = await create(c, "seen-late-by-c");
    expect(await status(c, onC)).toBe(200);
    await poll(c);
    const readAt = Date.now();
    px.cut();
    await raw.shutdown("NOSAVE").catch(() => undefined);
    await sleep(500);
    await redis.restart({ aof: false, freshDir: true });
    // c reaches the restarted Redis only after 2 x key_refresh_ms: judged by its last read alone, it was out of step.
    await sleep(readAt + 2 * KEY_REFRESH_MS + 500 - Date.now());
    px.heal();

    await until("c's key written back", async () => ((await inRedis(onC)) ? true : undefined), 15_000);
    expect(said(c, /not written back/)).toEqual([]);
    expect(said(c, /written back$/)).toMatchObject([{ level: 40, keys: ["acme/seen-late-by-c"] }]);
    const fresh = await start();
    expect(await status(fresh, onC)).toBe(200);
    expect(await status(c, onC)).toBe(200);
    await stop(fresh);
    await stop(c);
    px.close();
  }, 60_000);
});
