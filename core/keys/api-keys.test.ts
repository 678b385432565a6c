// The replica's key cache: serves what it has while the store is down, looks an unknown key up once (a miss is
// remembered briefly), follows the store's version, and writes last uses in batches, not per request.
import { describe, expect, it } from "vitest";
import { ApiKeys } from "./api-keys.ts";
import { MemoryApiKeyStore } from "../store/api-keys-memory.ts";
import type { StoredKey } from "../store/api-keys-types.ts";
import { createLogger } from "../log.ts";
import type { KeyRuntime } from "../config/runtime.ts";

const key = (n: number, over: Partial<StoredKey> = {}): StoredKey => ({
  sha256: String(n).padStart(64, "0"), id: `k${n}`, project: "acme", sandbox: false, hint: "abcd", createdAt: 0, expiresAt: null, revokedAt: null, ...over,
});

/** A memory key store that can go down, and counts its calls. */
class Store extends MemoryApiKeyStore {
  down = false;
  calls: Record<string, number> = {};
  private gate<T>(name: string, f: () => Promise<T>): Promise<T> {
    this.calls[name] = (this.calls[name] ?? 0) + 1;
    return this.down ? Promise.reject(new Error("store down")) : f();
  }
  override get(h: string) { return this.gate("get", () => super.get(h)); }
  override list() { return this.gate("list", () => super.list()); }
  override version() { return this.gate("version", () => super.version()); }
  override touch(u: Map<string, number>) { return this.gate("touch", () => super.touch(u)); }
}

const cache = (store: Store) => new ApiKeys(store, { refreshMs: () => 60_000, log: createLogger("silent") });

describe("ApiKeys", () => {
  it("loads at start, keeps serving while the store is down, and follows a revocation on the next refresh", async () => {
    const store = new Store();
    await store.create(key(1));
    const c = cache(store);
    await c.start();
    expect(c.find(key(1).sha256)).toMatchObject({ id: "k1", projectId: "acme", revoked: false, source: "api" });
    store.down = true;
    await c.refresh();
    expect(c.find(key(1).sha256)).toMatchObject({ id: "k1", revoked: false }); // no store, no problem
    store.down = false;
    await store.update(key(1).sha256, { revokedAt: 5 });
    await c.refresh();
    expect(c.find(key(1).sha256)).toMatchObject({ revoked: true });
    await c.close();
  });

  it("looks a key it does not know up in the store once; a miss is remembered, a flood shares one lookup", async () => {
    const store = new Store();
    const c = cache(store);
    await c.start();
    await store.create(key(2)); // created elsewhere after this cache loaded
    const found = await c.find(key(2).sha256);
    expect(found).toMatchObject({ id: "k2" });
    expect(c.find(key(2).sha256)).toBe(found); // cached now, synchronously
    const unknown = "9".repeat(64);
    await Promise.all(Array.from({ length: 20 }, () => c.find(unknown)));
    await c.find(unknown);
    expect(store.calls.get).toBe(2); // k2 once, the unknown key once
    store.down = true;
    expect(await c.find("8".repeat(64))).toBeUndefined(); // store down: unknown, at once
    await c.close();
  });

  it("writes last uses in a batch at flush time (the latest per key), and keeps them when the store cannot take them", async () => {
    const store = new Store();
    await store.create(key(3));
    const c = cache(store);
    await c.start();
    const k3 = c.find(key(3).sha256) as KeyRuntime;
    for (let i = 1; i <= 100; i++) c.used(k3, i);
    expect(store.calls.touch ?? 0).toBe(0); // nothing per request
    store.down = true;
    await c.flushUses();
    store.down = false;
    await c.flushUses();
    expect(store.calls.touch).toBe(2);
    expect((await store.lastUsed()).get(key(3).sha256)).toBe(100);
    await c.close();
  });

  it("reports a use while its flush is on its way to the store (neither pending nor stored yet)", async () => {
    const store = new Store();
    await store.create(key(4));
    const c = cache(store);
    await c.start();
    c.used(c.find(key(4).sha256) as KeyRuntime, 42);
    let land!: () => void;
    const touch = store.touch.bind(store);
    store.touch = (u) => new Promise<void>((r) => (land = r)).then(() => touch(u));
    const flushed = c.flushUses();
    expect((await c.lastUses()).get(key(4).sha256)).toBe(42);
    land();
    await flushed;
    expect((await c.lastUses()).get(key(4).sha256)).toBe(42);
    await c.close();
  });
});
