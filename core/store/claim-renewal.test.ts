// Idempotency claims renewed while their request runs: each store's renewClaims extends a claim only while the same
// owner holds it (as idempotencyComplete checks), and never brings back one completed, released, expired or taken
// over. Redis keeps time itself (PX), so the leases here are short and real.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { MemoryStore } from "./memory.ts";
import { SqliteStore } from "./sqlite.ts";
import { RedisStore } from "./redis.ts";
import { SplitLedgerStore } from "./ledger-split.ts";
import { GuardedStore, type SpooledRecord } from "./guard.ts";
import { Spool } from "./spool.ts";
import { createLogger } from "../log.ts";
import type { PostgresLedger } from "./postgres-ledger.ts";
import type { ClaimRenewal, IdempotencyBegin, Store, StoredResponse } from "./types.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";

let redis: TestRedis;
let n = 0;
beforeAll(async () => { redis = await startRedis(); });
afterAll(async () => { await redis?.stop(); });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * The first lease, which the renewal must come within: 400 ms left 150 ms for the set-up's store calls, and a loaded
 * machine took longer (the SQLite "live" claim had lapsed before it was renewed).
 */
const FIRST_LEASE_MS = 1500;
const answer: StoredResponse = { kind: "json", status: 200, headers: {}, body: { ok: true } };

const backends: Record<string, () => Promise<Store>> = {
  memory: async () => new MemoryStore(),
  sqlite: async () => new SqliteStore(join(mkdtempSync(join(tmpdir(), "mg-cr-")), "g.db"), { fsync: false }),
  redis: () => RedisStore.connect(redis.url, `cr${++n}:`),
  // Redis + Postgres: claims live in Redis; the ledger side is never reached.
  "redis+postgres": async () => new SplitLedgerStore(await RedisStore.connect(redis.url, `cr${++n}:`), { close: async () => {} } as PostgresLedger),
};

describe.each(Object.keys(backends))("%s store: renewClaims", (kind) => {
  let store: Store;
  beforeAll(async () => { store = await backends[kind]!(); });
  afterAll(async () => { await store?.close(); });
  const begin = (scope: string, owner: string, leaseMs = 400) => store.idempotencyBegin(`${kind}:${scope}`, "h", owner, leaseMs, Date.now());
  const renew = (claims: [scope: string, owner: string, leaseMs: number][]) =>
    store.renewClaims(claims.map(([scope, owner, leaseMs]) => ({ scope: `${kind}:${scope}`, owner, leaseMs })), Date.now());

  it("keeps a renewed claim past its first lease; one released, lapsed, finished or held by another owner is left alone", async () => {
    for (const s of ["live", "released", "others", "done"]) expect(await begin(s, "a", FIRST_LEASE_MS)).toEqual({ state: "new" });
    const begunBy = Date.now(); // every first lease ends by begunBy + FIRST_LEASE_MS
    expect(await begin("lapsed", "a", 100)).toEqual({ state: "new" });
    await store.idempotencyRelease(`${kind}:released`, "a");
    await store.idempotencyComplete(`${kind}:done`, "h", "a", answer, 60_000, Date.now());
    await sleep(250); // "lapsed" has expired
    await renew([["live", "a", 5000], ["released", "a", 5000], ["lapsed", "a", 5000], ["others", "not-a", 5000], ["done", "a", 5000]]);
    await sleep(begunBy + FIRST_LEASE_MS + 50 - Date.now()); // past the first lease of "live" and "others"

    // A duplicate of the live request still waits for it; the others are free (or finished) as they were.
    expect(await begin("live", "b")).toMatchObject({ state: "pending" });
    expect(await begin("others", "b")).toEqual({ state: "new" });
    expect(await begin("lapsed", "b")).toEqual({ state: "new" });
    expect(await begin("released", "b")).toEqual({ state: "new" });
    expect(((await begin("done", "b")) as IdempotencyBegin).state).toBe("done");

    // A shorter renewal never cuts a longer lease; the owner still completes it.
    await renew([["live", "a", 1]]);
    await sleep(50);
    expect(await begin("live", "b")).toMatchObject({ state: "pending" });
    await store.idempotencyComplete(`${kind}:live`, "h", "a", answer, 60_000, Date.now());
    expect(await begin("live", "b")).toEqual({ state: "done", response: answer });
  });
});

describe("guarded store: renewClaims", () => {
  it("renews in the store the claims it holds there, not those granted while it was down (fail_open)", async () => {
    const seen: ClaimRenewal[][] = [];
    let down = false;
    const inner = new (class extends MemoryStore {
      override idempotencyBegin(...a: Parameters<MemoryStore["idempotencyBegin"]>) {
        return down ? Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:6379")) : super.idempotencyBegin(...a);
      }
      override async renewClaims(claims: ClaimRenewal[], now: number) {
        seen.push(claims);
        return super.renewClaims(claims, now);
      }
    })();
    const spool = await Spool.open<SpooledRecord>(mkdtempSync(join(tmpdir(), "mg-cr-guard-")), "ledger");
    const g = new GuardedStore(inner, {
      config: () => ({ kind: "memory", timeout_ms: 200, probe_interval_ms: 20, when_unavailable: { idempotency: "fail_open" } }),
      log: createLogger("silent"), registry: new Registry(), spool,
    });
    try {
      expect(await g.idempotencyBegin("held", "h", "a", 400, Date.now())).toEqual({ state: "new" });
      down = true;
      expect(await g.idempotencyBegin("local", "h", "a", 400, Date.now())).toEqual({ state: "new" }); // granted locally
      down = false;
      await g.probe();
      await g.renewClaims([{ scope: "held", owner: "a", leaseMs: 2000 }, { scope: "local", owner: "a", leaseMs: 2000 }], Date.now());
      expect(seen).toEqual([[{ scope: "held", owner: "a", leaseMs: 2000 }]]);
      await sleep(500);
      expect(await g.idempotencyBegin("held", "h", "b", 400, Date.now())).toMatchObject({ state: "pending" });
    } finally {
      await g.close();
    }
  });
});
