// This package's root directory (package.json, gateway.yaml, schemas/), found by walking up from a module's URL:
// `dirname(import.meta.url)/..` is only right from the sources, the bundle runs from dist/ (bin/build.mjs).
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The nearest directory at or above `from`'s that holds a package.json. */
export function findPackageRoot(from: string): string {
  const start = dirname(fileURLToPath(from));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json in ${start} or above`);
  }
}

let root: string | undefined;
/** The package root of the running gateway (sources or bundle alike). */
export const packageRoot = (): string => (root ??= findPackageRoot(import.meta.url));
