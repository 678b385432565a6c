// What a key cache writes back to a store that lost keys: only what the store lacks, never an older state over a
// newer, never anything that loosens a key, and from a cache that may be stale only what turns a key off.
import { describe, expect, it } from "vitest";
import { lostKeys, tighterPatch, undonePatch } from "./lost-keys.ts";
import { patched, type StoredKey } from "../store/api-keys-types.ts";

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

  it("a newer state the store lost (an earlier expiry, lower limits or budget set since the backup) is written back, by a cache in step", () => {
    const cut = key(1, { expiresAt: 90, rev: 2 });
    const limited = key(2, { rateLimits: { rpm: 1, tpm: 5000 }, budget: { usd: "1.5", period: "day" }, rev: 3 });
    const stored = [key(1, { expiresAt: 1000, rev: 1 }), key(2, { rateLimits: { rpm: 1000, tpm: 100 }, budget: { usd: "20", period: "day" }, rev: 2 })];
    for (const epochChanged of [true, false]) { // a backup of the same epoch put back: the store's revs went back
      const out = lostKeys([cut, limited], stored, { inStep: true, epochChanged });
      expect(out.undone.map(({ key, patch }) => patched(key, patch))).toEqual([
        key(1, { expiresAt: 90, rev: 2 }),
        // Field by field: the lost rpm is lower, the store's tpm is lower already.
        key(2, { rateLimits: { rpm: 1, tpm: 100 }, budget: { usd: "1.5", period: "day" }, rev: 3 }),
      ]);
    }
    expect(lostKeys([cut, limited], stored, stale)).toEqual({ missing: [], undone: [], notRestored: [cut, limited] });
  });

  it("after an older backup is restored and the admin expires the key, a replica holding a lost state at a higher rev keeps the expiry", () => {
    // Backup at rev 1 (rpm 1000); rpm 5 then 4 (revs 2, 3) lost by the restore; the admin's expiry reuses rev 2.
    const lostState = key(1, { rateLimits: { rpm: 4 }, expiresAt: null, rev: 3 });
    const adminExpired = key(1, { rateLimits: { rpm: 1000 }, expiresAt: 500, rev: 2 });
    for (const epochChanged of [true, false]) {
      const [w] = lostKeys([lostState], [adminExpired], { inStep: true, epochChanged }).undone;
      expect(patched(w.key, w.patch)).toMatchObject({ expiresAt: 500, rateLimits: { rpm: 4 } }); // still expired; the lost lower rpm back
    }
  });

  it("a newer state the store lost that would loosen the key is never written back: a raise after the backup is lost with it", () => {
    const stored = key(1, { name: "ci", expiresAt: 500, rateLimits: { rpm: 10, tpm: 100 }, budget: { usd: "5", period: "month" }, rev: 1 });
    const looser: Partial<StoredKey>[] = [
      { expiresAt: 900 }, { expiresAt: null }, { rateLimits: { rpm: 20, tpm: 100 } }, { rateLimits: { tpm: 100 } }, { rateLimits: undefined },
      { budget: { usd: "50", period: "month" } }, { budget: undefined }, { budget: { usd: "1", period: "day" } }, { name: "renamed" },
    ];
    for (const over of looser) {
      const known = { ...stored, ...over, rev: 7 };
      for (const o of [inStep, { inStep: true, epochChanged: false }]) expect(lostKeys([known], [stored], o), JSON.stringify(over)).toEqual({ missing: [], undone: [], notRestored: [] });
    }
    // Two states rev cannot order, the epoch changed: the cache's would win, but only what tightens the key is put back.
    const noRev = { ...stored, rev: undefined };
    expect(lostKeys([{ ...noRev, expiresAt: null, rateLimits: { rpm: 5 } }], [noRev], inStep).undone.map((u) => u.patch)).toEqual([{ rateLimits: { rpm: 5, tpm: 100 } }]);
  });

  it("states are ordered by the store's rev, never by updatedAt: a later write stamped by a slower clock stands", () => {
    const fastClocks = key(1, { rateLimits: { rpm: 10 }, updatedAt: 1_000 + 600_000, rev: 2 }); // this replica's write, 10 min ahead
    const lastWrite = key(1, { rateLimits: { rpm: 20 }, updatedAt: 1_000, rev: 3 }); // another replica's, later
    for (const o of [inStep, { inStep: true, epochChanged: false }]) expect(lostKeys([fastClocks], [lastWrite], o)).toEqual({ missing: [], undone: [], notRestored: [] });
    const lowered = key(1, { rateLimits: { rpm: 5 }, updatedAt: 1_000, rev: 3 }); // a lower limit, later by rev, earlier by clock
    expect(lostKeys([lowered], [fastClocks], inStep).undone).toEqual([{ key: fastClocks, patch: { rateLimits: { rpm: 5 }, rev: 3 } }]);
  });

  it("a record without rev (an older release's) is older than one with it; two without: the cache's only when the epoch changed", () => {
    const tight = (over: Partial<StoredKey>) => key(1, { rateLimits: { rpm: 1 }, ...over });
    const loose = (over: Partial<StoredKey>) => key(1, { rateLimits: { rpm: 9 }, ...over });
    expect(lostKeys([tight({ rev: 5 })], [loose({})], { inStep: true, epochChanged: false }).undone).toHaveLength(1);
    expect(lostKeys([tight({})], [loose({ rev: 5 })], inStep).undone).toEqual([]);
    expect(lostKeys([tight({ updatedAt: 9 })], [loose({ updatedAt: 1 })], inStep).undone).toHaveLength(1);
    expect(lostKeys([tight({ updatedAt: 9 })], [loose({ updatedAt: 1 })], { inStep: true, epochChanged: false }).undone).toEqual([]);
    expect(lostKeys([tight({ rev: 4 })], [loose({ rev: 4 })], { inStep: true, epochChanged: false }).undone).toEqual([]);
  });

  it("a cache that is only behind (revoked, renamed, limited or rotated on another replica) writes nothing back", () => {
    const store = [key(1, { revokedAt: 5, rev: 9 }), key(2, { name: "new", rev: 9 }), key(3, { replacedBy: "k3-r2", rev: 9 }),
      key(5, { rateLimits: { rpm: 1 }, rev: 9 }), key(4)];
    const known = [key(1, { rev: 1 }), key(2, { rev: 1 }), key(3, { rev: 1 }), key(5, { rateLimits: { rpm: 9 }, rev: 1 })];
    for (const o of [inStep, { inStep: true, epochChanged: false }]) expect(lostKeys(known, store, o)).toEqual({ missing: [], undone: [], notRestored: [] });
  });
});

describe("the patches", () => {
  it("a tighter state keeps a revocation or rotation the store has; a rotation put back never lengthens the store's expiry", () => {
    expect(tighterPatch(key(1, { name: "n", rateLimits: { rpm: 1 }, rev: 9 }), key(1, { revokedAt: 5, revokedReason: "leaked" }))).toEqual({ rateLimits: { rpm: 1 }, rev: 9 });
    expect(tighterPatch(key(1, { rev: 9 }), key(1, { replacedBy: "k1-r2", expiresAt: 50 }))).toBeUndefined();
    expect(tighterPatch(key(1, { revokedAt: 7, rev: 9 }), key(1))).toEqual({ revokedAt: 7, rev: 9 });
    expect(undonePatch(key(1, { replacedBy: "k1-r2", expiresAt: 90 }), key(1, { expiresAt: 50 }))).toEqual({ replacedBy: "k1-r2" });
  });
});
