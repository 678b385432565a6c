// The stored-responses conformance suite, on every backend (Redis: a real redis-server on a free port).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { MemoryStore } from "./memory.ts";
import { SqliteStore } from "./sqlite.ts";
import { RedisStore } from "./redis.ts";
import type { Store } from "./types.ts";
import type { ResponseRecord } from "./responses-types.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";

/** A live key's view of a project's stored responses. */
const live = (project: string) => ({ project, sandbox: false });

let redis: TestRedis;
let n = 0;
beforeAll(async () => { redis = await startRedis(); });
afterAll(async () => { await redis?.stop(); });

const inputOf = (id: string) => [{ id: `msg_in_${id}`, type: "message", role: "user", content: [{ type: "input_text", text: "Hi ✓" }] }];
/** What saving gives a record: its input's UTF-8 JSON size (the conversation bound worked it out). */
const inputBytes = (input: unknown[]) => Buffer.byteLength(JSON.stringify(input), "utf8");

const record = (id: string, over: Partial<ResponseRecord> = {}): ResponseRecord => {
  const now = Date.now();
  return {
    id, project: "acme", createdAt: now, expiresAt: now + 60_000, provider: "up", model: "openai/gpt-4o-mini", native: false,
    previousResponseId: null,
    input: inputOf(id), inputBytes: inputBytes(inputOf(id)),
    response: {
      id, object: "response", status: "completed",
      output: [
        { type: "function_call", id: `fc_${id}`, call_id: "call_1", name: "get_weather", arguments: "{}", status: "completed" },
        { type: "message", id: `msg_${id}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: "Hello" }] },
      ],
    },
    ...over,
  };
};

const dbPath = join(mkdtempSync(join(tmpdir(), "mg-resp-store-")), "g.db");
const backends: Record<string, () => Promise<Store>> = {
  memory: async () => new MemoryStore(),
  sqlite: async () => new SqliteStore(dbPath),
  redis: () => RedisStore.connect(redis.url, `rs${++n}:`),
};

describe.each(Object.keys(backends))("%s store: responses", (kind) => {
  let store: Store;
  beforeAll(async () => { store = await backends[kind]!(); });
  afterAll(async () => { await store?.close(); });

  it("put then get returns the record as saved, only in its own project", async () => {
    const rec = record(`resp_a_${kind}`, { native: true, previousResponseId: "resp_prev" });
    await store.responses.put(rec);
    expect(await store.responses.get(live("acme"), rec.id, Date.now())).toEqual(rec);
    expect(await store.responses.get(live("other"), rec.id, Date.now())).toBeUndefined();
    expect(await store.responses.get(live("acme"), "resp_unknown", Date.now())).toBeUndefined();
  });

  it("keeps whether a native response was made with the project's own key (its upstream delete goes with that key), absent when not said", async () => {
    const own = record(`resp_own_${kind}`, { native: true, projectKey: true });
    const gateways = record(`resp_gw_${kind}`, { native: true, projectKey: false });
    const unsaid = record(`resp_unsaid_${kind}`, { native: true });
    for (const rec of [own, gateways, unsaid]) await store.responses.put(rec);
    expect((await store.responses.get(live("acme"), own.id, Date.now()))?.projectKey).toBe(true);
    expect((await store.responses.get(live("acme"), gateways.id, Date.now()))?.projectKey).toBe(false);
    expect(await store.responses.get(live("acme"), unsaid.id, Date.now())).not.toHaveProperty("projectKey");
  });

  it("an id another project holds is never saved over (an upstream repeating it, or picking it); its own project may re-save it", async () => {
    const mine = record(`resp_dup_${kind}`);
    expect(await store.responses.put(mine)).toBe(true);
    // Refused, and said so: the caller's answer then says store: false.
    expect(await store.responses.put({ ...record(mine.id), project: "other", model: "other/model" })).toBe(false);
    expect(await store.responses.get(live("acme"), mine.id, Date.now())).toEqual(mine);
    expect(await store.responses.get(live("other"), mine.id, Date.now())).toBeUndefined();
    expect(await store.responses.items(live("other"), [`msg_${mine.id}`], Date.now())).toEqual(new Map());
    const again = { ...mine, model: "openai/gpt-4o" };
    expect(await store.responses.put(again)).toBe(true);
    expect(await store.responses.get(live("acme"), mine.id, Date.now())).toEqual(again);
  });

  it("a sandbox key's records are its own: its project's live keys neither read, list the items of, delete nor save over them, and the other way round", async () => {
    const sandbox = { project: "acme", sandbox: true };
    const sim = record(`resp_sim_${kind}`, { sandbox: true });
    const real = record(`resp_real_${kind}`);
    expect(await store.responses.put(sim)).toBe(true);
    expect(await store.responses.put(real)).toBe(true);
    expect(await store.responses.get(sandbox, sim.id, Date.now())).toEqual(sim);
    expect(await store.responses.get(live("acme"), real.id, Date.now())).toEqual(real);
    // Each kind's id is absent to the other, as another project's is.
    expect(await store.responses.get(live("acme"), sim.id, Date.now())).toBeUndefined();
    expect(await store.responses.get(sandbox, real.id, Date.now())).toBeUndefined();
    expect(await store.responses.items(live("acme"), [`fc_${sim.id}`], Date.now())).toEqual(new Map());
    expect(await store.responses.items(sandbox, [`fc_${real.id}`], Date.now())).toEqual(new Map());
    expect((await store.responses.items(sandbox, [`fc_${sim.id}`], Date.now())).get(`fc_${sim.id}`)?.responseId).toBe(sim.id);
    expect(await store.responses.delete(sandbox, real.id, Date.now())).toBe(false);
    expect(await store.responses.delete(live("acme"), sim.id, Date.now())).toBe(false);
    // An upstream repeating the other kind's id is refused, whichever kind saves it.
    expect(await store.responses.put({ ...record(sim.id), model: "live/model" })).toBe(false);
    expect(await store.responses.put({ ...record(real.id), sandbox: true, model: "sim/model" })).toBe(false);
    expect(await store.responses.get(sandbox, sim.id, Date.now())).toEqual(sim);
    expect(await store.responses.get(live("acme"), real.id, Date.now())).toEqual(real);
    expect(await store.responses.delete(sandbox, sim.id, Date.now())).toBe(true);
    expect(await store.responses.get(live("acme"), real.id, Date.now())).toEqual(real);
  });

  it("a live record and a sandbox one holding one output item id (an upstream repeating the simulator's) are both kept, each key kind referencing its own", async () => {
    const sandbox = { project: "acme", sandbox: true };
    const shared = `msg_shared_${kind}`;
    const withItem = (id: string, text: string) => ({ id, object: "response", status: "completed",
      output: [{ type: "message", id: shared, role: "assistant", status: "completed", content: [{ type: "output_text", text }] }] });
    const sim = record(`resp_simshared_${kind}`, { sandbox: true, response: withItem(`resp_simshared_${kind}`, "simulated") });
    const real = record(`resp_realshared_${kind}`, { response: withItem(`resp_realshared_${kind}`, "upstream") });
    expect(await store.responses.put(sim)).toBe(true);
    expect(await store.responses.put(real)).toBe(true);
    expect((await store.responses.items(live("acme"), [shared], Date.now())).get(shared)).toEqual({ responseId: real.id, item: (real.response.output as unknown[])[0] });
    expect((await store.responses.items(sandbox, [shared], Date.now())).get(shared)).toEqual({ responseId: sim.id, item: (sim.response.output as unknown[])[0] });
    // Deleting one kind's record leaves the other's item where it was.
    expect(await store.responses.delete(sandbox, sim.id, Date.now())).toBe(true);
    expect(await store.responses.items(sandbox, [shared], Date.now())).toEqual(new Map());
    expect((await store.responses.items(live("acme"), [shared], Date.now())).get(shared)?.responseId).toBe(real.id);
  });

  it("a record read back knows its input's size (what the conversation bound counts), without serialising it", async () => {
    const { inputBytes: _given, ...rec } = record(`resp_size_${kind}`);
    const saved = { ...rec, ...(kind === "sqlite" ? {} : { inputBytes: 12345 }) };
    await store.responses.put(saved);
    // SQLite measures the text it holds; the others keep what the saving request worked out.
    expect((await store.responses.get(live("acme"), rec.id, Date.now()))?.inputBytes).toBe(kind === "sqlite" ? inputBytes(rec.input) : 12345);
  });

  it("a record given with its input as JSON (made by the saving request, a slice at a time) keeps that input", async () => {
    const input = [...inputOf("j1"), { id: "fco_j2", type: "function_call_output", call_id: "call_1", output: "21C ✓" }];
    const rec = record(`resp_json_${kind}`, { input, inputBytes: inputBytes(input) });
    await store.responses.put({ ...rec, inputJson: JSON.stringify(input) });
    const back = await store.responses.get(live("acme"), rec.id, Date.now());
    expect(back).toEqual(rec); // the input as given, and no inputJson on a record read back
    expect(back).not.toHaveProperty("inputJson");
    back!.input.pop(); // a record read back is the caller's own: changing it changes nothing kept
    expect((await store.responses.get(live("acme"), rec.id, Date.now()))?.input).toEqual(input);
  });

  it("the full output (hidden reasoning state) is kept and is what item lookups return", async () => {
    const rec = record(`resp_f_${kind}`);
    rec.fullOutput = [{ type: "reasoning", id: `rs_${rec.id}`, summary: [], encrypted_content: "mgr1.abc" }];
    await store.responses.put(rec);
    expect((await store.responses.get(live("acme"), rec.id, Date.now()))?.fullOutput).toEqual(rec.fullOutput);
    const found = await store.responses.items(live("acme"), [`rs_${rec.id}`, `fc_${rec.id}`], Date.now());
    expect([...found.keys()]).toEqual([`rs_${rec.id}`]);
    expect(found.get(`rs_${rec.id}`)!.item.encrypted_content).toBe("mgr1.abc");
  });

  it("output items are found by id in their project only", async () => {
    const rec = record(`resp_b_${kind}`);
    await store.responses.put(rec);
    const found = await store.responses.items(live("acme"), [`fc_${rec.id}`, `msg_${rec.id}`, "msg_nope", `msg_in_${rec.id}`], Date.now());
    expect([...found.keys()].sort()).toEqual([`fc_${rec.id}`, `msg_${rec.id}`].sort());
    expect(found.get(`fc_${rec.id}`)).toEqual({ responseId: rec.id, item: (rec.response.output as unknown[])[0] });
    expect((await store.responses.items(live("other"), [`fc_${rec.id}`], Date.now())).size).toBe(0);
  });

  it("delete removes the record and its items; another project cannot delete it", async () => {
    const rec = record(`resp_c_${kind}`);
    await store.responses.put(rec);
    expect(await store.responses.delete(live("other"), rec.id, Date.now())).toBe(false);
    expect(await store.responses.get(live("acme"), rec.id, Date.now())).toBeDefined();
    expect(await store.responses.delete(live("acme"), rec.id, Date.now())).toBe(true);
    expect(await store.responses.get(live("acme"), rec.id, Date.now())).toBeUndefined();
    expect((await store.responses.items(live("acme"), [`fc_${rec.id}`], Date.now())).size).toBe(0);
    expect(await store.responses.delete(live("acme"), rec.id, Date.now())).toBe(false);
  });

  it("an expired record and its items are gone", async () => {
    const rec = record(`resp_d_${kind}`);
    rec.expiresAt = Date.now() + 150;
    await store.responses.put(rec);
    expect(await store.responses.get(live("acme"), rec.id, Date.now())).toBeDefined();
    // Past the expiry by the clock the caller passes (memory, SQLite) and by Redis's own PX.
    await new Promise((r) => setTimeout(r, 200));
    expect(await store.responses.get(live("acme"), rec.id, Date.now())).toBeUndefined();
    expect((await store.responses.items(live("acme"), [`fc_${rec.id}`], Date.now())).size).toBe(0);
  });
});

describe("sqlite store: responses", () => {
  it("survive closing and reopening the file; expired rows are swept", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "mg-resp-reopen-")), "g.db");
    const a = new SqliteStore(path);
    const rec = record("resp_durable");
    const old = record("resp_old", { createdAt: 1, expiresAt: 2 });
    await a.responses.put(old);
    await a.responses.put(rec);
    await a.close();
    const b = new SqliteStore(path);
    expect(await b.responses.get(live("acme"), rec.id, Date.now())).toEqual(rec);
    b.responses.sweep(Date.now());
    // Swept: not even a read with an old clock finds it.
    expect(await b.responses.get(live("acme"), old.id, 0)).toBeUndefined();
    expect(await b.responses.get(live("acme"), rec.id, Date.now())).toEqual(rec);
    await b.close();
  });

  it("a file of the release before project_key: its rows read without it (not known), new ones keep it", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "mg-resp-old-")), "g.db");
    const old = new Database(path);
    old.exec(`CREATE TABLE responses (id TEXT PRIMARY KEY, project TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
      provider TEXT NOT NULL, model TEXT NOT NULL, native INTEGER NOT NULL, previous_id TEXT, response TEXT NOT NULL, input TEXT NOT NULL, full_output TEXT)`);
    const was = record("resp_before", { native: true });
    old.prepare("INSERT INTO responses VALUES (?, ?, ?, ?, ?, ?, 1, NULL, ?, ?, NULL)").run(was.id, was.project, was.createdAt, was.expiresAt, was.provider, was.model, JSON.stringify(was.response), JSON.stringify(was.input));
    old.close();
    const s = new SqliteStore(path);
    expect(await s.responses.get(live("acme"), was.id, Date.now())).toEqual(was);
    const rec = record("resp_after", { native: true, projectKey: true });
    await s.responses.put(rec);
    expect(await s.responses.get(live("acme"), rec.id, Date.now())).toEqual(rec);
    await s.close();
  });

  it("a file of the release before sandbox keys had their own: its rows and items are live keys', new ones keep their kind", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "mg-resp-old-")), "g.db");
    const old = new Database(path);
    // The previous release's tables, as it made them.
    old.exec(`CREATE TABLE responses (id TEXT PRIMARY KEY, project TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
      provider TEXT NOT NULL, model TEXT NOT NULL, native INTEGER NOT NULL, previous_id TEXT, response TEXT NOT NULL, input TEXT NOT NULL, full_output TEXT, project_key INTEGER);
      CREATE TABLE response_items (project TEXT NOT NULL, item_id TEXT NOT NULL, response_id TEXT NOT NULL, expires_at INTEGER NOT NULL, item TEXT NOT NULL,
      PRIMARY KEY (project, item_id))`);
    const was = record("resp_before_kinds");
    old.prepare("INSERT INTO responses VALUES (?, ?, ?, ?, ?, ?, 0, NULL, ?, ?, NULL, NULL)").run(was.id, was.project, was.createdAt, was.expiresAt, was.provider, was.model, JSON.stringify(was.response), JSON.stringify(was.input));
    const fc = (was.response.output as Record<string, unknown>[])[0]!;
    old.prepare("INSERT INTO response_items VALUES (?, ?, ?, ?, ?)").run(was.project, fc.id, was.id, was.expiresAt, JSON.stringify(fc));
    old.close();
    const s = new SqliteStore(path);
    const sandbox = { project: "acme", sandbox: true };
    expect(await s.responses.get(live("acme"), was.id, Date.now())).toEqual(was);
    expect(await s.responses.get(sandbox, was.id, Date.now())).toBeUndefined();
    expect((await s.responses.items(live("acme"), [`fc_${was.id}`], Date.now())).size).toBe(1);
    expect((await s.responses.items(sandbox, [`fc_${was.id}`], Date.now())).size).toBe(0);
    const sim = record("resp_after_kinds", { sandbox: true });
    await s.responses.put(sim);
    expect(await s.responses.get(sandbox, sim.id, Date.now())).toEqual(sim);
    expect(await s.responses.get(live("acme"), sim.id, Date.now())).toBeUndefined();
    await s.close();
  });

  it("a file of the previous release keeps its item table as it was (no rebuild at start): sandbox items get a table of their own, and the previous release still serves on the file", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "mg-resp-old-")), "g.db");
    const old = new Database(path);
    // The item table as the previous release (3ad838d) made it: no kind of key anywhere.
    old.exec(`CREATE TABLE response_items (project TEXT NOT NULL, item_id TEXT NOT NULL, response_id TEXT NOT NULL, expires_at INTEGER NOT NULL, item TEXT NOT NULL,
      PRIMARY KEY (project, item_id))`);
    old.prepare("INSERT INTO response_items VALUES (?, ?, ?, ?, ?)").run("acme", "msg_kept_live", "resp_kept_live", Date.now() + 60_000, JSON.stringify({ id: "msg_kept_live" }));
    const itemSchema = (db: Database.Database) => db.prepare("SELECT sql FROM sqlite_master WHERE name = 'response_items'").get();
    const before = itemSchema(old);
    old.close();
    const s = new SqliteStore(path);
    const sandbox = { project: "acme", sandbox: true };
    expect((await s.responses.items(live("acme"), ["msg_kept_live"], Date.now())).get("msg_kept_live")?.responseId).toBe("resp_kept_live");
    expect(await s.responses.items(sandbox, ["msg_kept_live"], Date.now())).toEqual(new Map());
    const item = { type: "message", id: "msg_kept_live", role: "assistant", content: [] };
    const sim = record("resp_sim_after", { sandbox: true, response: { id: "resp_sim_after", object: "response", status: "completed", output: [item] } });
    expect(await s.responses.put(sim)).toBe(true);
    expect((await s.responses.items(sandbox, ["msg_kept_live"], Date.now())).get("msg_kept_live")?.responseId).toBe(sim.id);
    expect((await s.responses.items(live("acme"), ["msg_kept_live"], Date.now())).get("msg_kept_live")?.responseId).toBe("resp_kept_live");
    // The sandbox record's items expire and are swept with it, from its own table.
    await s.responses.put(record("resp_sim_gone", { sandbox: true, createdAt: 1, expiresAt: 2,
      response: { id: "resp_sim_gone", object: "response", status: "completed", output: [{ ...item, id: "msg_sim_gone" }] } }));
    s.responses.sweep(Date.now());
    expect(await s.responses.items(sandbox, ["msg_sim_gone"], 0)).toEqual(new Map());
    await s.close();
    // The live item table is the previous release's, untouched; that release still saves and finds its items.
    const back = new Database(path);
    expect(itemSchema(back)).toEqual(before);
    back.prepare("INSERT OR REPLACE INTO response_items (project, item_id, response_id, expires_at, item) VALUES (?, ?, ?, ?, ?)")
      .run("acme", "msg_downgraded", "resp_downgraded", Date.now() + 60_000, "{}");
    expect(back.prepare("SELECT response_id FROM response_items WHERE project = ? AND item_id = ? AND expires_at > ?").get("acme", "msg_downgraded", Date.now()))
      .toEqual({ response_id: "resp_downgraded" });
    back.close();
  });

  it("a file whose responses table predates full_output gets the column", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "mg-resp-old-")), "g.db");
    const old = new Database(path);
    old.exec(`CREATE TABLE responses (id TEXT PRIMARY KEY, project TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
      provider TEXT NOT NULL, model TEXT NOT NULL, native INTEGER NOT NULL, previous_id TEXT, response TEXT NOT NULL, input TEXT NOT NULL)`);
    old.close();
    const s = new SqliteStore(path);
    const rec = { ...record("resp_migrated"), fullOutput: [{ type: "reasoning", id: "rs_m", summary: [], encrypted_content: "mgr1.x" }] };
    await s.responses.put(rec);
    expect(await s.responses.get(live("acme"), rec.id, Date.now())).toEqual(rec);
    await s.close();
  });
});
