// What a replica's key cache knows that the store no longer does. Keys are never deleted (only revoked), a revocation
// stands once made and a rotated key keeps its successor, and on Redis every change counts up the key's rev inside the
// store's own write (StoredKey.rev), so a store that lacks a key the cache holds, or holds it at a lower rev than the
// cache saw it at, has lost it: Redis restarted without its data, was flushed, or was restored from an older backup.
// Short of that evidence (or an epoch changed, when two states cannot be ordered) the store's state stands, as the
// last write: a cache holding a state another replica has since changed only follows it. Nothing here reads a clock:
// replicas' clocks need not agree.
//
// A cache is only as good as its last sync: one cut off from the store for a while (a network partition) may hold a
// key as it was before a revocation made meanwhile elsewhere, and cannot tell that from the store's loss by what it
// holds. So a cache that was not in step with the store when the loss was seen (lostKeys' `inStep`) puts back only
// what can turn a key off (revocations, rotations), never a key or a state that would let a request in.
import type { KeyPatch, StoredKey } from "../store/api-keys-types.ts";

export interface LostKeys {
  /** Keys the store does not hold at all: to create again, as this replica last knew them. */
  missing: StoredKey[];
  /** Keys the store holds an older state of, or with a revocation or rotation undone: the patch that puts it back. */
  undone: { key: StoredKey; patch: KeyPatch }[];
  /** What a cache not in step with the store does not write back (it may be stale): keys missing, newer states. */
  notRestored: StoredKey[];
}

/** The fields a change sets: what two states of one key are compared on, and what a newer state puts back. */
const CHANGED: (keyof StoredKey)[] = ["name", "expiresAt", "revokedAt", "revokedReason", "rateLimits", "budget", "replacedBy", "updatedAt"];

const sameState = (a: StoredKey, b: StoredKey) => CHANGED.every((f) => JSON.stringify(a[f] ?? null) === JSON.stringify(b[f] ?? null));

/**
 * Whether `known` is a later state of the key than `stored`, by rev, the store's own change counter: a higher rev in
 * the cache than in the store, or one the store's record lacks (it went back to before this release changed the key),
 * means the store lost that state. Two different states that rev cannot order (the same rev, or none: records an
 * older release last changed, or a store without revs) are ordered only when the store's epoch changed (it lost or
 * was restored): then the cache's wins; else the store's stands. Never by updatedAt: the replicas' clocks may differ.
 */
export function isNewer(known: StoredKey, stored: StoredKey, epochChanged: boolean): boolean {
  if (sameState(known, stored)) return false;
  if (known.rev !== undefined && stored.rev !== undefined && known.rev !== stored.rev) return known.rev > stored.rev;
  if (known.rev !== undefined && stored.rev === undefined) return true;
  if (known.rev === undefined && stored.rev !== undefined) return false;
  return epochChanged;
}

/** The revocation and rotation `known` has and `stored` lacks (undefined: none). Never lets anything in. */
export function undonePatch(known: StoredKey, stored: StoredKey): KeyPatch | undefined {
  const patch: KeyPatch = {};
  if (known.revokedAt !== null && stored.revokedAt === null) {
    patch.revokedAt = known.revokedAt;
    if (known.revokedReason !== undefined) patch.revokedReason = known.revokedReason;
  }
  if (known.replacedBy !== undefined && stored.replacedBy === undefined) {
    patch.replacedBy = known.replacedBy;
    // The end of the rotation's overlap, unless the store's expiry comes sooner.
    if (known.expiresAt !== null && (stored.expiresAt === null || known.expiresAt < stored.expiresAt)) patch.expiresAt = known.expiresAt;
  }
  return Object.keys(patch).length ? patch : undefined;
}

/** The patch that makes `stored` the state `known` is, keeping a revocation or rotation `stored` has. */
export function newerPatch(known: StoredKey, stored: StoredKey): KeyPatch {
  const patch: Record<string, unknown> = {};
  for (const f of CHANGED) patch[f] = known[f];
  // The rev the state had: the store keeps it (or one more than its own, if that is higher), so caches that hold
  // this state at this rev agree with the store, and none takes it for a lost one.
  patch.rev = known.rev;
  if (stored.revokedAt !== null && known.revokedAt === null) {
    patch.revokedAt = stored.revokedAt;
    patch.revokedReason = stored.revokedReason;
  }
  if (stored.replacedBy !== undefined && known.replacedBy === undefined) {
    patch.replacedBy = stored.replacedBy;
    patch.expiresAt = stored.expiresAt;
  }
  return patch as KeyPatch;
}

/**
 * What to write back, comparing the cache (`known`) with the store's keys. `inStep`: the cache was confirmed to
 * match the store shortly before this answer (ApiKeys: within 2 x key_refresh_ms); `epochChanged`: the store says it
 * lost or was restored since. A state is written back only when isNewer finds the store lost it.
 */
export function lostKeys(known: Iterable<StoredKey>, stored: StoredKey[], o: { inStep: boolean; epochChanged: boolean }): LostKeys {
  const bySha = new Map(stored.map((k) => [k.sha256, k]));
  const out: LostKeys = { missing: [], undone: [], notRestored: [] };
  for (const k of known) {
    const s = bySha.get(k.sha256);
    if (!s) {
      (o.inStep ? out.missing : out.notRestored).push(k);
      continue;
    }
    const newer = isNewer(k, s, o.epochChanged);
    if (newer && o.inStep) {
      out.undone.push({ key: s, patch: newerPatch(k, s) });
      continue;
    }
    if (newer) out.notRestored.push(k);
    const patch = undonePatch(k, s);
    if (patch) out.undone.push({ key: s, patch });
  }
  return out;
}
