// The layout version each store carries (SQLite: meta.schema_version; Redis: <prefix>schema; the Postgres ledger:
// mg_meta.schema_version). Raised only when a release changes the layout in a way an older release would misread.
// A store stamped with a NEWER version than this release understands is refused — at start, in `check`, in
// `usage` — rather than read or migrated wrongly; an older or missing one is migrated as always, then stamped.

/** What this release writes and reads up to, per store. */
export const SCHEMA_VERSION = {
  // 1: the version stamp itself, and SQLite's rollup high-water mark (meta.rollup_rowid).
  sqlite: 1,
  redis: 1,
  postgres: 1,
} as const;

export type SchemaStore = keyof typeof SCHEMA_VERSION;

/** A store written by a newer release: refused, never read or migrated. */
export class StoreSchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreSchemaError";
  }
}

/**
 * The version a store carries (`found`: its stored text, absent for a store from before versions), checked against
 * this release: undefined when absent, the number when this release reads it; a newer (or unreadable) one throws.
 * `where` names the store for the operator ("the SQLite file /data/gateway.db").
 */
export function checkSchemaVersion(store: SchemaStore, where: string, found: string | number | null | undefined): number | undefined {
  if (found === null || found === undefined) return undefined;
  const max = SCHEMA_VERSION[store];
  const n = Number(found);
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new StoreSchemaError(`${where} carries a schema version this release cannot read (${String(found)}, this release reads up to ${max}): ` +
      "it was written by another program or a newer release: upgrade, or restore a backup");
  }
  if (n > max) {
    throw new StoreSchemaError(`${where} was written by a newer release (schema ${n}, this release reads up to ${max}): upgrade, or restore a backup`);
  }
  return n;
}
