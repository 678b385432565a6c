// Leases renewed while their holder lives: the sweep (one per process) and each store's renewHolds, which extends a
// hold still held and never brings back one settled or already expired. Redis keeps time itself (TIME), so the
// leases here are short and real.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LeaseRenewal } from "./lease-renewal.ts";
import { MemoryStore } from "./memory.ts";
import { SqliteStore } from "./sqlite.ts";
import { RedisStore } from "./redis.ts";
import type { Store } from "./types.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis.ts";

let redis: TestRedis;
let n = 0;
beforeAll(async () => { redis = await startRedis(); });
afterAll(async () => { await redis?.stop(); });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * The first lease, which the renewal must come within: 400 ms left 150 ms for the set-up's store calls, which a loaded
 * machine can take (the same test of idempotency claims lost its SQLite claim so).
 */
const FIRST_LEASE_MS = 1500;

describe("LeaseRenewal", () => {
  it("renews every live item in one call per sweep, drops the ones no longer held, and stops when none is left", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    try {
      const calls: string[][] = [];
      const settled = new Set<string>();
      const r = new LeaseRenewal<string>(1000, async (items) => void calls.push(items), { live: (i) => !settled.has(i) });
      r.add("a");
      r.add("b");
      await vi.advanceTimersByTimeAsync(1000);
      expect(calls).toEqual([["a", "b"]]);
      settled.add("a");
      await vi.advanceTimersByTimeAsync(1000);
      expect(calls[1]).toEqual(["b"]);
      expect(r.size).toBe(1);
      r.delete("b");
      await vi.advanceTimersByTimeAsync(5000);
      expect(calls).toHaveLength(2);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a failed sweep is reported and the next one tries again", async () => {
    const errors: unknown[] = [];
    let fail = true;
    const seen: number[] = [];
    const r = new LeaseRenewal<number>(60_000, async (items) => {
      if (fail) throw new Error("store down");
      seen.push(...items);
    }, { onError: (e) => errors.push(e) });
    r.add(1);
    await r.sweep();
    fail = false;
    await r.sweep();
    expect(errors).toHaveLength(1);
    expect(seen).toEqual([1]);
    r.stop();
  });
});

const backends: Record<string, () => Promise<Store>> = {
  memory: async () => new MemoryStore(),
  sqlite: async () => new SqliteStore(join(mkdtempSync(join(tmpdir(), "mg-lr-")), "g.db"), { fsync: false }),
  redis: () => RedisStore.connect(redis.url, `lr${++n}:`),
};

describe.each(Object.keys(backends))("%s store: renewHolds", (kind) => {
  let store: Store;
  beforeAll(async () => { store = await backends[kind]!(); });
  afterAll(async () => { await store?.close(); });
  const hold = (id: string, leaseMs: number) =>
    store.reserve({ project: "acme", periodKey: `month:${kind}`, periodStart: 0, id, amountPico: 10n, limitPico: 1000n, leaseMs }, Date.now());
  const reserved = () => store.reserved("acme", `month:${kind}`, Date.now());
  const lease = (id: string, leaseMs: number) => ({ project: "acme", periodKey: `month:${kind}`, id, leaseMs });

  it("keeps a renewed hold past its first lease; a released or lapsed one stays gone", async () => {
    await hold("live", FIRST_LEASE_MS);
    const heldBy = Date.now(); // "live"'s first lease ends by heldBy + FIRST_LEASE_MS
    await hold("released", FIRST_LEASE_MS);
    await hold("lapsed", 100);
    await store.release({ project: "acme", periodKey: `month:${kind}`, id: "released" });
    await sleep(250); // "lapsed" has expired
    await store.renewHolds([lease("live", 5000), lease("released", 5000), lease("lapsed", 5000)], Date.now());
    await sleep(heldBy + FIRST_LEASE_MS + 50 - Date.now()); // past "live"'s first lease
    expect(await reserved()).toBe(10n);
    // A shorter renewal never cuts a longer lease.
    await store.renewHolds([lease("live", 1)], Date.now());
    await sleep(50);
    expect(await reserved()).toBe(10n);
    await store.release({ project: "acme", periodKey: `month:${kind}`, id: "live" });
    expect(await reserved()).toBe(0n);
  });
});
