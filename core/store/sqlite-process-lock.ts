// One serving gateway process per SQLite file. Rate windows and budget holds live in the serving process
// (core/store/local.ts), so a second process on the same file would double every limit: `start --workers` is refused
// on SQLite for that reason, and a second `start` on the same file is refused here. The lock is SQLite's own, on a
// side file (<db>.lock) where an exclusive transaction stays open while the process lives; the OS drops it when
// the process ends, however it ends, so a crashed gateway never leaves it behind. Readers (`model-gateway usage`,
// the admin API of another tool) do not take it.
import Database from "better-sqlite3";

export class StoreInUseError extends Error {
  constructor(readonly path: string) {
    super(`another gateway process is serving ${path}: one process per SQLite file (rate limits and budget holds are kept in the process). ` +
      "Stop the other one, give this one another store.path, or use store kind redis for several processes");
    this.name = "StoreInUseError";
  }
}

/** Holds the serving lock of the SQLite file at `dbPath` until release(); throws StoreInUseError when another process holds it. */
export function holdServingLock(dbPath: string): { release(): void } {
  const lock = new Database(`${dbPath}.lock`, { timeout: 0 });
  try {
    lock.exec("BEGIN EXCLUSIVE");
  } catch (err) {
    lock.close();
    if ((err as { code?: string }).code === "SQLITE_BUSY") throw new StoreInUseError(dbPath);
    throw err;
  }
  return { release: () => lock.open && lock.close() };
}
