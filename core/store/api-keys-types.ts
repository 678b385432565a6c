// API keys created through the admin API (or `model-gateway keys new --url`): kept in the store, so every replica
// sees them. Only the sha256 of a key is ever stored. Each replica serves them from a cache of its own
// (core/keys/api-keys.ts), refreshed when version() changes; the store is behind this interface so the durable copy
// can move (to PostgreSQL, say) without touching the cache or the admin API.
/** A budget period (as in types.ts, written out: types.ts imports this file). */
type Period = "day" | "week" | "month" | "total";

export interface StoredKey {
  /** sha256 hex of the key: the record's identity. */
  sha256: string;
  /** Unique within its project (among gateway.yaml's keys too). */
  id: string;
  project: string;
  /** mg_test_ key: reaches only the simulator, never billed. */
  sandbox: boolean;
  /** The key's last four characters, to tell keys apart in a listing. */
  hint: string;
  name?: string;
  /** ms since the epoch. */
  createdAt: number;
  /** Who created it: an admin key's id, or "cli". */
  createdBy?: string;
  /** ms since the epoch; null: never. A rotated key's expiry is the end of its overlap window. */
  expiresAt: number | null;
  /** ms since the epoch; null: not revoked. */
  revokedAt: number | null;
  revokedReason?: string;
  rateLimits?: { rpm?: number; tpm?: number };
  budget?: { usd: string; period?: Period };
  /** Rotation: the id of the key this one replaced, and of the key that replaced this one. */
  rotatedFrom?: string;
  replacedBy?: string;
  /**
   * ms since the epoch of the last change (creation included), by the clock of the replica that made it: for people
   * reading the record, never compared (replicas' clocks need not agree). Absent in records last changed by an older
   * release.
   */
  updatedAt?: number;
  /**
   * The store's change counter for this key (Redis only): 1 at creation, one more with each change, counted inside the
   * store's atomic write, so of two states of one key the higher rev is the later, whatever the replicas' clocks say.
   * A cache holding a higher rev than the store's saw a state the store lost (core/keys/lost-keys.ts). Set by the
   * store; a caller gives one only when writing back a lost state. Absent in records of older releases and of the
   * memory and SQLite stores.
   */
  rev?: number;
}

/** The fields a change may set (the identity fields never change). */
export type KeyPatch = Partial<Pick<StoredKey, "name" | "expiresAt" | "revokedAt" | "revokedReason" | "rateLimits" | "budget" | "replacedBy" | "updatedAt" | "rev">>;

export interface ApiKeyStore {
  /** Every key, revoked and expired ones included (a replica's cache is loaded from it). */
  list(): Promise<StoredKey[]>;
  /** One key by its sha256: a replica meeting a key it does not know yet. */
  get(sha256: string): Promise<StoredKey | undefined>;
  /** Add a key; false (nothing written) when its project already has a key with this id, or the hash exists. */
  create(key: StoredKey): Promise<boolean>;
  /** Set some fields of a key, atomically; the changed record, or undefined when there is no such key. */
  update(sha256: string, patch: KeyPatch): Promise<StoredKey | undefined>;
  /**
   * Rotation in one atomic step: add `fresh` and apply `patch` to the key `sha256`, only while that key has no
   * successor and is not revoked — of concurrent rotations of one key exactly one wins. Nothing is written when refused.
   */
  rotate(sha256: string, fresh: StoredKey, patch: KeyPatch): Promise<RotateResult>;
  /**
   * Changes whenever a key is created or changed: replicas poll it (one small read) to know when to reload. A store
   * that can lose its data or be restored (Redis) adds a space and its epoch, which changes when it does (epochOf).
   */
  version(): Promise<string>;
  /** Record last uses (sha256 -> ms); a use older than the one stored is ignored. Not a change (version stays). */
  touch(used: Map<string, number>): Promise<void>;
  /** sha256 -> last use, ms. */
  lastUsed(): Promise<Map<string, number>>;
  /**
   * The least time (ms) the store's server has been running, never more than it has (a Redis: INFO server), when it
   * can tell: a store that lost its data in a restart lost it no later than that long ago. Absent for stores that do
   * not restart apart from the gateway (memory, SQLite).
   */
  serverUptimeMs?(): Promise<number | undefined>;
}

export type RotateResult =
  | { ok: true; previous: StoredKey }
  | { ok: false; reason: "missing" | "revoked" | "taken" }
  | { ok: false; reason: "replaced"; replacedBy: string };

/** Why `old` cannot be rotated now (checked inside each store's atomic step), or undefined when it can. */
export function rotationRefused(old: StoredKey | undefined): RotateResult | undefined {
  if (!old) return { ok: false, reason: "missing" };
  if (old.replacedBy) return { ok: false, reason: "replaced", replacedBy: old.replacedBy };
  if (old.revokedAt !== null) return { ok: false, reason: "revoked" };
  return undefined;
}

/** A record with a patch applied (fields set to undefined are removed). */
export function patched(k: StoredKey, patch: KeyPatch): StoredKey {
  const out: Record<string, unknown> = { ...k };
  for (const [f, v] of Object.entries(patch)) {
    if (v === undefined) delete out[f];
    else out[f] = v;
  }
  return out as unknown as StoredKey;
}

/** The store's epoch in a version() answer ("" for a store without one). */
export function epochOf(version: string): string {
  const space = version.indexOf(" ");
  return space < 0 ? "" : version.slice(space + 1);
}
