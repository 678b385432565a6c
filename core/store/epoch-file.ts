// The spool directory's record of each Redis store's epoch (redis.ts: a restart without persistence is noticed by a
// changed epoch). Replicas and workers may share the directory and start at the same moment, so each write goes
// through a temporary file of its own: a shared name let one process rename the other's file away (ENOENT at start).
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname } from "node:path";
import { makeDirs } from "./make-dirs.ts";

/** store location -> epoch; an unreadable or missing file reads as empty. */
export function readEpochs(file: string): Record<string, string> {
  try {
    const v = JSON.parse(readFileSync(file, "utf8"));
    return v && typeof v === "object" ? v : {};
  } catch {
    return {};
  }
}

/** Replaces the file whole (write, then rename over it): a reader sees the old content or the new, never a part. */
export function writeEpochs(file: string, epochs: Record<string, string>): void {
  makeDirs(dirname(file));
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify(epochs, null, 2) + "\n");
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
