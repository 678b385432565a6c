// A config file without store: runs on the SQLite file ./data/gateway.db beside it (core/config/resolve.ts). The
// operator never chose that place, and such a config used to run on the memory store, wherever it was read from. So when the
// place cannot be used, start and check say that the config has no store: section, where the default went, why it
// cannot be created there, and what to write instead. A config that is not a file in a directory (read from a pipe,
// <(...), /dev/stdin) has no "beside it": a durable store under /dev or /proc is refused, not made.
import { configWithoutDirectory } from "../config/config-place.ts";

const WHAT_TO_WRITE = "add store: { kind: sqlite, path: /a/writable/dir/gateway.db } to the config, or store: { kind: memory } " +
  "to run as before (nothing kept: spend, the ledger and API-created keys are lost at exit)";

/**
 * Start's and check's refusal of the default SQLite file at `path`, which cannot be created (or, `exists`, opened) for
 * `reason`. An existing file holds a deployment's state: the memory store is no advice for it.
 */
export function defaultStoreUnusable(path: string, reason: string, exists = false): string {
  const what = exists
    ? "fix its permissions, or name a store: with the file's new place"
    : WHAT_TO_WRITE;
  return `the config has no store: section, so it runs on the default SQLite store ${path}, which cannot be ` +
    `${exists ? "opened" : "created"} (${reason}): ${what}`;
}

/**
 * Why the default SQLite file has no place beside `configFile` (read from a pipe or a device, or from a directory
 * under /dev or /proc), or undefined for a regular file in an ordinary directory.
 */
export function defaultStoreHasNoPlace(configFile: string, configDir: string): string | undefined {
  const from = configWithoutDirectory(configFile, configDir);
  if (!from) return undefined;
  return `the config has no store: section and is read from ${configFile} (${from}), so the default SQLite store ` +
    `./data/gateway.db has no place beside it: ${WHAT_TO_WRITE}`;
}
