// What a replica's key cache knows that the store no longer does. Keys are never deleted (only revoked), a revocation
// stands once made and a rotated key keeps its successor, and on Redis every change counts up the key's rev inside the
// store's own write (StoredKey.rev), so a store that lacks a key the cache holds, or holds it at a lower rev than the
// cache saw it at, has lost it: Redis restarted without its data, was flushed, or was restored from an older backup.
// Short of that evidence (or an epoch changed, when two states cannot be ordered) the store's state stands, as the
// last write: a cache holding a state another replica has since changed only follows it. Nothing here reads a clock:
// replicas' clocks need not agree.
//
// Even that evidence can mislead: a backup put back brings its revs back with it, so the next change (an admin
// expiring the key) reuses a rev one of the lost states had, and a cache holding that lost state at a higher rev
// takes its own as the later. So a state written back only ever makes the store's key more restrictive, field by
// field (an earlier expiry, lower limits, a lower budget, a revocation, a rotation), never less (a later or removed
// expiry, a raised or removed limit, a new name): whatever rev says, a write-back never lets in a request the store's
// key keeps out. The price: a limit raised or an expiry lifted after a backup was taken is lost when it is restored.
//
// A cache is only as good as its last sync: one cut off from the store for a while (a network partition) may hold a
// key as it was before a revocation made meanwhile elsewhere, and cannot tell that from the store's loss by what it
// holds. So a cache that was not in step with the store when the loss was seen (lostKeys' `inStep`) puts back only
// what can turn a key off (revocations, rotations), never a key or a state that would let a request in.
import type { KeyPatch, StoredKey } from "../store/api-keys-types.ts";
import { toPico } from "../money/money.ts";

export interface LostKeys {
  /** Keys the store does not hold at all: to create again, as this replica last knew them. */
  missing: StoredKey[];
  /** Keys the store holds an older, less restrictive state of, or with a revocation or rotation undone: the patch that tightens it back. */
  undone: { key: StoredKey; patch: KeyPatch }[];
  /** What a cache not in step with the store does not write back (it may be stale): keys missing, tighter newer states. */
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

/**
 * What of a newer state `known` the store lost makes its key more restrictive than `stored`, field by field: a
 * revocation or rotation (undonePatch), an earlier expiry (or one where the store has none), a lower rpm or tpm, a
 * lower budget of the same period (or one where the store has none). Never anything that loosens the key (a later or
 * removed expiry, a raised or removed limit or budget, a name): those the store keeps. Undefined: nothing to tighten.
 */
export function tighterPatch(known: StoredKey, stored: StoredKey): KeyPatch | undefined {
  const patch: KeyPatch = { ...undonePatch(known, stored) };
  if (known.expiresAt !== null && (stored.expiresAt === null || known.expiresAt < stored.expiresAt)) patch.expiresAt = known.expiresAt;
  const limits = lowerLimits(known.rateLimits, stored.rateLimits);
  if (limits) patch.rateLimits = limits;
  if (lowerBudget(known.budget, stored.budget)) patch.budget = known.budget;
  if (!Object.keys(patch).length) return undefined;
  // The store's rev goes up to the rev the lost state had (at least), so later changes count on from there and none
  // reuses a lost state's rev.
  if (known.rev !== undefined) patch.rev = known.rev;
  return patch;
}

/** The store's limits with each one `known` sets lower (or the store lacks) taken from it; undefined: none lower. */
function lowerLimits(known: StoredKey["rateLimits"], stored: StoredKey["rateLimits"]): StoredKey["rateLimits"] | undefined {
  const out = { ...stored };
  let lower = false;
  for (const f of ["rpm", "tpm"] as const) {
    const k = known?.[f];
    if (k === undefined || (out[f] !== undefined && k >= out[f])) continue;
    out[f] = k;
    lower = true;
  }
  return lower ? out : undefined;
}

/** Whether `known` is a budget where the store has none, or a lower one over the same period (others don't compare). */
function lowerBudget(known: StoredKey["budget"], stored: StoredKey["budget"]): boolean {
  if (!known) return false;
  if (!stored) return true;
  return (known.period ?? "month") === (stored.period ?? "month") && toPico(known.usd) < toPico(stored.usd);
}

/**
 * What to write back, comparing the cache (`known`) with the store's keys. `inStep`: the cache was confirmed to
 * match the store shortly before this answer (ApiKeys: within 2 x key_refresh_ms); `epochChanged`: the store says it
 * lost or was restored since. A state is written back only when isNewer finds the store lost it, and then only what
 * of it makes the store's key more restrictive (tighterPatch).
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
    const tighter = isNewer(k, s, o.epochChanged) ? tighterPatch(k, s) : undefined;
    const patch = (o.inStep && tighter) || undonePatch(k, s);
    if (patch) out.undone.push({ key: s, patch });
    // A stale cache's newer state would have tightened the key beyond a revocation or rotation: say it was not.
    if (!o.inStep && tighter && Object.keys(tighter).some((f) => f !== "rev" && !(patch && f in patch))) out.notRestored.push(k);
  }
  return out;
}
