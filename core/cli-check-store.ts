// `model-gateway check` runs start's check of a SQLite store.path (core/store/sqlite-open-error.ts) without opening
// or creating anything (no file, no <path>.lock). A path no user could open — a directory, a file where a directory
// should be — is a problem at the config's store: line, as start refuses it; one only this user may not write is a
// note, since start may run as another user (the gateway's own).
import { statSync } from "node:fs";
import type { ConfigProblem } from "./config/source.ts";
import type { StoreConfig } from "./generated/types/gateway.ts";
import { sqliteOpenProblem, type FsProbe } from "./store/sqlite-open-error.ts";
import { sqlitePathOf, storeProblem } from "./store/index.ts";

/** What the file system says of paths, leaving out who may write them. */
const whoeverRuns: FsProbe = {
  access: () => {},
  kind(p) {
    try {
      return statSync(p).isDirectory() ? "dir" : "file";
    } catch {
      return undefined;
    }
  },
};

export function storePathCheck(store: StoreConfig | undefined, configDir: string, configFile: string): { problem?: ConfigProblem; note?: string } {
  if (store?.kind !== "sqlite") return {};
  const path = sqlitePathOf(store, configDir);
  if (path === ":memory:") return {};
  const refused = sqliteOpenProblem(path, whoeverRuns);
  if (refused) return { problem: storeProblem(store, configFile, refused) };
  const forThisUser = sqliteOpenProblem(path);
  return forThisUser ? { note: `start run by this user would refuse the store: ${forThisUser}` } : {};
}
