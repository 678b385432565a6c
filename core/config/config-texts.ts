// The text of the files a config was loaded from (gateway.yaml and its includes), by absolute path. `start --workers N`
// keeps the texts its workers last accepted, so a worker started in place of one that died loads what the others
// serve, not whatever the file on disk says now (core/cluster.ts). Texts as written: `${VARS}` are not resolved, so
// no secret is in them that the file itself does not hold; they are kept in memory and sent over IPC, never written.
import { readFileSync } from "node:fs";

export type ConfigTexts = Record<string, string>;

/**
 * Reads a config's files, from `given` when it holds the file (else from the disk), and records every text it
 * returned in `read`: what the loaded config was made of.
 */
export function textReader(given: ConfigTexts | undefined): { read: (file: string) => string; texts: ConfigTexts } {
  const texts: ConfigTexts = {};
  const read = (file: string) => {
    const text = Object.hasOwn(given ?? {}, file) ? given![file]! : readFileSync(file, "utf8");
    texts[file] = text;
    return text;
  };
  return { read, texts };
}

/** Whether every one of these files still holds this text on disk (one gone or unreadable: no). */
export function sameOnDisk(texts: ConfigTexts): boolean {
  return Object.entries(texts).every(([file, text]) => {
    try {
      return readFileSync(file, "utf8") === text;
    } catch {
      return false;
    }
  });
}
