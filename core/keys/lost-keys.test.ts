// What a key cache writes back to a store that lost keys: only what the store lacks, never an older state over a
// newer, and from a cache that may be stale only what turns a key off.
import { describe, expect, it } from "vitest";
import { lostKeys, newerPatch, undonePatch } from "./lost-keys.ts";
import type { StoredKey } from "../store/api-keys-types.ts";

const key = (n: number, over: Partial<StoredKey> = {}): StoredKey => ({
  sha256: String(n).padStart(64, "0"), id: `k${n}`, project: "acme", sandbox: false, hint: "abcd", createdAt: 0, expiresAt: null, revokedAt: null, ...over,
});
const inStep = { inStep: true, epochChanged: true };
const stale = { inStep: false, epochChanged: true };

describe("lostKeys", () => {
  it("a key the store no longer holds is written back as the cache knew it, by a cache in step with the store", () => {
    expect(lostKeys([key(1), key(2, { revokedAt: 5 })], [key(1)], inStep)).toEqual({ missing: [key(2, { revokedAt: 5 })], undone: [], notRestored: [] });
  });

  it("a cache that was not in step writes no key back: it may hold it as it was before a revocation made meanwhile", () => {
    expect(lostKeys([key(1), key(2)], [key(1)], stale)).toEqual({ missing: [], undone: [], notRestored: [key(2)] });
  });

  it("a revocation or rotation the store lost (an older backup) is put back on the store's record, even by a cache not in step", () => {
    const known = [key(1, { revokedAt: 5, revokedReason: "leaked" }), key(2, { replacedBy: "k2-r2", expiresAt: 90 })];
    for (const o of [{ inStep: true, epochChanged: false }, stale]) {
      expect(lostKeys(known, [key(1, { name: "x" }), key(2, { expiresAt: 1000 })], o).undone).toEqual([
        { key: key(1, { name: "x" }), patch: { revokedAt: 5, revokedReason: "leaked" } },
        { key: key(2, { expiresAt: 1000 }), patch: { replacedBy: "k2-r2", expiresAt: 90 } },
      ]);
    }
  });

  it("a newer state the store lost (an expiry or a lower limit set since the backup) is written back whole, by a cache in step", () => {
    const cut = key(1, { expiresAt: 90, rev: 2 });
    const limited = key(2, { rateLimits: { rpm: 1 }, rev: 3 });
    const stored = [key(1, { rev: 1 }), key(2, { rateLimits: { rpm: 1000 }, rev: 2 })];
    for (const epochChanged of [true, false]) { // a backup of the same epoch put back: the store's revs went back
      const out = lostKeys([cut, limited], stored, { inStep: true, epochChanged });
      expect(out.undone.map((u) => u.patch)).toEqual([
        expect.objectContaining({ expiresAt: 90, rev: 2, rateLimits: undefined }),
        expect.objectContaining({ rateLimits: { rpm: 1 }, expiresAt: null, rev: 3 }),
      ]);
    }
    expect(lostKeys([cut, limited], stored, stale)).toEqual({ missing: [], undone: [], notRestored: [cut, limited] });
  });

  it("states are ordered by the store's rev, never by updatedAt: a later write stamped by a slower clock stands", () => {
    const fastClocks = key(1, { rateLimits: { rpm: 10 }, updatedAt: 1_000 + 600_000, rev: 2 }); // this replica's write, 10 min ahead
    const lastWrite = key(1, { rateLimits: { rpm: 20 }, updatedAt: 1_000, rev: 3 }); // another replica's, later
    for (const o of [inStep, { inStep: true, epochChanged: false }]) expect(lostKeys([fastClocks], [lastWrite], o)).toEqual({ missing: [], undone: [], notRestored: [] });
    expect(lostKeys([lastWrite], [fastClocks], inStep).undone).toEqual([{ key: fastClocks, patch: expect.objectContaining({ rateLimits: { rpm: 20 }, rev: 3 }) }]);
  });

  it("a record without rev (an older release's) is older than one with it; two without: the cache's only when the epoch changed", () => {
    expect(lostKeys([key(1, { name: "new", rev: 5 })], [key(1, { name: "old" })], { inStep: true, epochChanged: false }).undone).toHaveLength(1);
    expect(lostKeys([key(1, { name: "old" })], [key(1, { name: "new", rev: 5 })], inStep).undone).toEqual([]);
    expect(lostKeys([key(1, { name: "a", updatedAt: 9 })], [key(1, { name: "b", updatedAt: 1 })], inStep).undone).toHaveLength(1);
    expect(lostKeys([key(1, { name: "a", updatedAt: 9 })], [key(1, { name: "b", updatedAt: 1 })], { inStep: true, epochChanged: false }).undone).toEqual([]);
    expect(lostKeys([key(1, { name: "a", rev: 4 })], [key(1, { name: "b", rev: 4 })], { inStep: true, epochChanged: false }).undone).toEqual([]);
  });

  it("a cache that is only behind (revoked, renamed, limited or rotated on another replica) writes nothing back", () => {
    const store = [key(1, { revokedAt: 5, rev: 9 }), key(2, { name: "new", rev: 9 }), key(3, { replacedBy: "k3-r2", rev: 9 }),
      key(5, { rateLimits: { rpm: 1 }, rev: 9 }), key(4)];
    const known = [key(1, { rev: 1 }), key(2, { rev: 1 }), key(3, { rev: 1 }), key(5, { rateLimits: { rpm: 9 }, rev: 1 })];
    for (const o of [inStep, { inStep: true, epochChanged: false }]) expect(lostKeys(known, store, o)).toEqual({ missing: [], undone: [], notRestored: [] });
  });
});

describe("the patches", () => {
  it("a newer state keeps a revocation or rotation the store has; a rotation put back never lengthens the store's expiry", () => {
    expect(newerPatch(key(1, { name: "n", rev: 9 }), key(1, { revokedAt: 5, revokedReason: "leaked" }))).toMatchObject({ name: "n", revokedAt: 5, revokedReason: "leaked", rev: 9 });
    expect(newerPatch(key(1, { rev: 9 }), key(1, { replacedBy: "k1-r2", expiresAt: 50 }))).toMatchObject({ replacedBy: "k1-r2", expiresAt: 50 });
    expect(undonePatch(key(1, { replacedBy: "k1-r2", expiresAt: 90 }), key(1, { expiresAt: 50 }))).toEqual({ replacedBy: "k1-r2" });
  });
});
