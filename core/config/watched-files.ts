// The files a running gateway's config watch follows. The serving config's (gateway.yaml and its includes), and
// also the includes the file on disk names now: after a reload refused for an include that is missing or broken,
// creating or fixing that file is the change that should reload, though no serving config names it yet.
import { dirname, isAbsolute, resolve } from "node:path";
import { readYaml } from "./source.ts";
import type { RuntimeConfig } from "./runtime.ts";

export interface WatchedFiles {
  /** Every file whose change is a reason to reload. */
  files: string[];
  /**
   * Those a change waits for while they are gone (renamed away, deleted before being written anew): gateway.yaml
   * and the serving includes it still names. Another one missing is left for the reload to report, at its include.
   */
  awaited: string[];
}

export function watchedFiles(serving: RuntimeConfig): WatchedFiles {
  const main = serving.file;
  const served = includes(serving.raw.include, serving.dir);
  const src = readYaml(main, []);
  const onDisk = src && typeof src.value === "object" ? includes((src.value as { include?: unknown }).include, dirname(main)) : undefined;
  return {
    files: [...new Set([main, ...served, ...(onDisk ?? [])])],
    awaited: [main, ...served.filter((f) => !onDisk || onDisk.includes(f))],
  };
}

function includes(list: unknown, dir: string): string[] {
  if (!Array.isArray(list)) return [];
  return list.filter((f): f is string => typeof f === "string").map((f) => (isAbsolute(f) ? f : resolve(dir, f)));
}
