// The Redis Responses store against a real redis-server, where replicas share the records: two projects storing one
// id at the same moment (on two replicas), and records in the layout the previous release writes and reads.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { RedisResponseStore } from "./responses-redis.ts";
import type { ResponseRecord } from "./responses-types.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";

/** A live key's view of a project's stored responses. */
const live = (project: string) => ({ project, sandbox: false });

let redis: TestRedis;
const clients: Redis[] = [];
let n = 0;
beforeAll(async () => { redis = await startRedis(); });
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await redis?.stop();
});

/** A replica's connection to the shared Redis. */
function client(): Redis {
  const c = new Redis(redis.url);
  clients.push(c);
  return c;
}

const record = (id: string, project: string, text: string): ResponseRecord => {
  const now = Date.now();
  return {
    id, project, createdAt: now, expiresAt: now + 60_000, provider: "up", model: `${project}/model`, native: true, previousResponseId: null,
    input: [{ id: `msg_in_${project}`, type: "message", role: "user", content: [{ type: "input_text", text }] }],
    response: { id, object: "response", status: "completed", output: [{ type: "message", id: `msg_${id}`, role: "assistant", content: [{ type: "output_text", text }] }] },
  };
};

/**
 * Holds every read `c` makes until `until` settles, after Redis has answered it: a replica that reads the id's
 * owner and only then writes is caught between the two while another replica stores the same id.
 */
function holdReads(c: Redis, until: Promise<unknown>): void {
  const get = c.get.bind(c) as (key: string) => Promise<string | null>;
  (c as unknown as { get: (key: string) => Promise<string | null> }).get = async (key) => {
    const v = await get(key);
    await until.catch(() => undefined);
    return v;
  };
}

describe("redis store: responses shared by replicas", () => {
  it("two projects storing one id at the same moment: one is kept, the other is told it was not, and nothing is overwritten", async () => {
    const prefix = `rr${++n}:`;
    const id = "resp_same_moment";
    const a = client();
    const b = client();
    const acme = record(id, "acme", "acme's conversation");
    const other = record(id, "other", "other's conversation");
    let secondDone!: () => void;
    holdReads(a, new Promise<void>((r) => (secondDone = r)));
    const first = new RedisResponseStore(a, prefix).put(acme);
    const bStore = new RedisResponseStore(b, prefix);
    const second = await bStore.put(other).finally(() => secondDone());
    const saved = { acme: await first, other: second };

    // Exactly one project holds the id; the other's answer says store: false.
    expect(Object.values(saved).filter(Boolean)).toHaveLength(1);
    const [winner, loser] = saved.acme ? [acme, other] : [other, acme];
    expect(await bStore.get(live(winner.project), id, Date.now())).toEqual(winner);
    expect(await bStore.get(live(loser.project), id, Date.now())).toBeUndefined();
    expect(await bStore.items(live(loser.project), [`msg_${id}`], Date.now())).toEqual(new Map());
    expect((await bStore.items(live(winner.project), [`msg_${id}`], Date.now())).get(`msg_${id}`)).toEqual({ responseId: id, item: (winner.response.output as unknown[])[0] });
  });

  it("a project re-saving its own id while another stores it keeps it; the other is refused", async () => {
    const prefix = `rr${++n}:`;
    const id = "resp_resaved";
    const a = client();
    const store = new RedisResponseStore(a, prefix);
    const mine = record(id, "acme", "first turn");
    expect(await store.put(mine)).toBe(true);
    const again = { ...mine, model: "acme/other-model" };
    const [resaved, refused] = await Promise.all([store.put(again), new RedisResponseStore(client(), prefix).put(record(id, "other", "x"))]);
    expect([resaved, refused]).toEqual([true, false]);
    expect(await store.get(live("acme"), id, Date.now())).toEqual(again);
  });

  it("a record the previous release wrote (its fields in any order) is refused to another project and re-saved by its own", async () => {
    const prefix = `rr${++n}:`;
    const id = "resp_previous_release";
    const raw = client();
    const store = new RedisResponseStore(raw, prefix);
    const old = record(id, "acme", "kept by the previous release");
    // The previous release's record is one JSON object too; read as JSON, whatever its fields' order.
    const { id: _id, project: _project, ...rest } = old;
    await raw.set(`${prefix}resp:${id}`, JSON.stringify({ ...rest, project: old.project, id: old.id }), "PX", 60_000);
    expect(await store.put(record(id, "other", "x"))).toBe(false);
    // Without "sandbox" it is a live key's: its project's sandbox keys neither read nor save over it.
    expect(await store.put({ ...record(id, "acme", "x"), sandbox: true })).toBe(false);
    expect(await store.get({ project: "acme", sandbox: true }, id, Date.now())).toBeUndefined();
    expect(await store.get(live("acme"), id, Date.now())).toEqual(old);
    const mine = record(id, "acme", "re-saved");
    expect(await store.put(mine)).toBe(true);
    expect(await store.get(live("acme"), id, Date.now())).toEqual(mine);
  });

  it("what this release writes, the previous release reads (one JSON object, its items beside it)", async () => {
    const prefix = `rr${++n}:`;
    const raw = client();
    const rec = record("resp_read_by_previous", "acme", "hi");
    expect(await new RedisResponseStore(raw, prefix).put({ ...rec, inputJson: JSON.stringify(rec.input) })).toBe(true);
    // The previous release's get and items: JSON.parse of the key, the project checked.
    expect(JSON.parse((await raw.get(`${prefix}resp:${rec.id}`))!)).toEqual(rec);
    expect(JSON.parse((await raw.get(`${prefix}respitem:acme:msg_${rec.id}`))!)).toEqual({ responseId: rec.id, item: (rec.response.output as unknown[])[0] });
    expect(await raw.pttl(`${prefix}resp:${rec.id}`)).toBeGreaterThan(0);
  });

  it("a sandbox key's record opens with its project and sandbox: true, its items under respitem-sandbox:, apart from the live keys'", async () => {
    const prefix = `rr${++n}:`;
    const raw = client();
    const store = new RedisResponseStore(raw, prefix);
    const sim = { ...record("resp_sandbox_kept", "acme", "simulated"), sandbox: true };
    expect(await store.put(sim)).toBe(true);
    const json = (await raw.get(`${prefix}resp:${sim.id}`))!;
    expect(json.startsWith(`{"id":"${sim.id}","project":"acme","sandbox":true,`)).toBe(true);
    expect(JSON.parse(json)).toEqual(sim);
    expect(await raw.exists(`${prefix}respitem-sandbox:acme:msg_${sim.id}`, `${prefix}respitem:acme:msg_${sim.id}`)).toBe(1);
    // Another replica's live key of the project: absent to it, and never saved over.
    const other = new RedisResponseStore(client(), prefix);
    expect(await other.get(live("acme"), sim.id, Date.now())).toBeUndefined();
    expect(await other.items(live("acme"), [`msg_${sim.id}`], Date.now())).toEqual(new Map());
    expect(await other.put(record(sim.id, "acme", "live"))).toBe(false);
    expect(await other.get({ project: "acme", sandbox: true }, sim.id, Date.now())).toEqual(sim);
  });

  it("a response a replica of the previous release deleted (it leaves the respitem-sandbox: keys) is no longer referable by its items", async () => {
    const prefix = `rr${++n}:`;
    const raw = client();
    const store = new RedisResponseStore(raw, prefix);
    const sandbox = { project: "acme", sandbox: true };
    const sim = { ...record("resp_deleted_by_previous", "acme", "simulated"), sandbox: true };
    const kept = { ...record("resp_still_kept", "acme", "simulated too"), sandbox: true };
    expect(await store.put(sim)).toBe(true);
    expect(await store.put(kept)).toBe(true);
    // The previous release's delete: the record and the respitem: keys it knows of.
    await raw.del(`${prefix}resp:${sim.id}`, `${prefix}respitem:acme:msg_${sim.id}`);
    expect(await raw.exists(`${prefix}respitem-sandbox:acme:msg_${sim.id}`)).toBe(1);
    const found = await store.items(sandbox, [`msg_${sim.id}`, `msg_${kept.id}`], Date.now());
    expect([...found.keys()]).toEqual([`msg_${kept.id}`]);
    // Nor when the id was stored again since by another project (an upstream repeating it).
    expect(await store.put(record(sim.id, "other", "other's"))).toBe(true);
    expect(await store.items(sandbox, [`msg_${sim.id}`], Date.now())).toEqual(new Map());
  });

  it("items of a record an older release wrote with its fields in another order are still found by their own key kind", async () => {
    const prefix = `rr${++n}:`;
    const raw = client();
    const store = new RedisResponseStore(raw, prefix);
    const old = record("resp_other_order", "acme", "kept long ago");
    const { id: _id, project: _project, ...rest } = old;
    await raw.set(`${prefix}resp:${old.id}`, JSON.stringify({ ...rest, project: old.project, id: old.id }), "PX", 60_000);
    const item = JSON.stringify({ responseId: old.id, item: (old.response.output as unknown[])[0] });
    await raw.set(`${prefix}respitem:acme:msg_${old.id}`, item, "PX", 60_000);
    await raw.set(`${prefix}respitem-sandbox:acme:msg_${old.id}`, item, "PX", 60_000);
    expect((await store.items(live("acme"), [`msg_${old.id}`], Date.now())).get(`msg_${old.id}`)?.responseId).toBe(old.id);
    // A live key's record: a sandbox item key naming it (there should be none) gives nothing.
    expect(await store.items({ project: "acme", sandbox: true }, [`msg_${old.id}`], Date.now())).toEqual(new Map());
  });
});
