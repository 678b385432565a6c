// What a key cache writes back to a store that lost keys: only what the store lacks, never an older state over a newer.
import { describe, expect, it } from "vitest";
import { lostKeys } from "./lost-keys.ts";
import type { StoredKey } from "../store/api-keys-types.ts";

const key = (n: number, over: Partial<StoredKey> = {}): StoredKey => ({
  sha256: String(n).padStart(64, "0"), id: `k${n}`, project: "acme", sandbox: false, hint: "abcd", createdAt: 0, expiresAt: null, revokedAt: null, ...over,
});

describe("lostKeys", () => {
  it("a key the store no longer holds is written back as the cache knew it", () => {
    expect(lostKeys([key(1), key(2, { revokedAt: 5 })], [key(1)])).toEqual({ missing: [key(2, { revokedAt: 5 })], undone: [] });
  });

  it("a revocation or rotation the store lost (an older backup) is put back on the store's record", () => {
    const known = [key(1, { revokedAt: 5, revokedReason: "leaked" }), key(2, { replacedBy: "k2-r2", expiresAt: 90 })];
    expect(lostKeys(known, [key(1, { name: "x" }), key(2, { expiresAt: 1000 })]).undone).toEqual([
      { key: key(1, { name: "x" }), patch: { revokedAt: 5, revokedReason: "leaked" } },
      { key: key(2, { expiresAt: 1000 }), patch: { replacedBy: "k2-r2", expiresAt: 90 } },
    ]);
  });

  it("a cache that is only behind (revoked, renamed or rotated on another replica) writes nothing back", () => {
    const store = [key(1, { revokedAt: 5 }), key(2, { name: "new" }), key(3, { replacedBy: "k3-r2" }), key(4)];
    expect(lostKeys([key(1), key(2), key(3)], store)).toEqual({ missing: [], undone: [] });
  });
});
