// What a replica's key cache knows that the store no longer does. Keys are never deleted (only revoked), a revocation
// stands once made and a rotated key keeps its successor, so a store that lacks a key the cache holds, or shows a key
// unrevoked or unrotated that the cache saw revoked or rotated, has lost it: Redis restarted without its data, was
// flushed, or was restored from an older backup. Such changes are written back, never the other way round: a cache
// that is merely behind (a revocation made on another replica) is brought forward by the store as usual.
import type { KeyPatch, StoredKey } from "../store/api-keys-types.ts";

export interface LostKeys {
  /** Keys the store does not hold at all: to create again, as this replica last knew them. */
  missing: StoredKey[];
  /** Keys the store holds with a revocation or rotation undone: the patch that puts it back. */
  undone: { key: StoredKey; patch: KeyPatch }[];
}

/** The revocation and rotation `known` has and `stored` lacks (undefined: none). */
export function undonePatch(known: StoredKey, stored: StoredKey): KeyPatch | undefined {
  const patch: KeyPatch = {};
  if (known.revokedAt !== null && stored.revokedAt === null) {
    patch.revokedAt = known.revokedAt;
    if (known.revokedReason !== undefined) patch.revokedReason = known.revokedReason;
  }
  if (known.replacedBy !== undefined && stored.replacedBy === undefined) {
    patch.replacedBy = known.replacedBy;
    patch.expiresAt = known.expiresAt; // the end of the rotation's overlap
  }
  return Object.keys(patch).length ? patch : undefined;
}

export function lostKeys(known: Iterable<StoredKey>, stored: StoredKey[]): LostKeys {
  const bySha = new Map(stored.map((k) => [k.sha256, k]));
  const out: LostKeys = { missing: [], undone: [] };
  for (const k of known) {
    const s = bySha.get(k.sha256);
    if (!s) {
      out.missing.push(k);
      continue;
    }
    const patch = undonePatch(k, s);
    if (patch) out.undone.push({ key: s, patch });
  }
  return out;
}
