// Whether a config file has a directory that paths written in it can be resolved against. A config read from a pipe
// (<(...), /dev/stdin) or from a directory under /dev or /proc has none: "./logs" beside /dev/fd/63 is /dev/fd/logs,
// where Node's recursive mkdir loops for ever (a gateway that printed "listening" and then never answered).
import { realpathSync, statSync } from "node:fs";

/**
 * What `configFile` is read from when it has no usable directory ("a pipe or a device, not a file in a directory", or
 * "a file under /dev"), or undefined for a regular file in an ordinary directory (or a file gone since it was read).
 */
export function configWithoutDirectory(configFile: string, configDir: string): string | undefined {
  let regular: boolean;
  try {
    regular = statSync(configFile).isFile();
  } catch {
    return undefined; // gone since it was read: what uses its paths says what is wrong
  }
  let dir = configDir;
  try {
    dir = realpathSync(configDir);
  } catch {
    // kept as given
  }
  if (regular && !/^\/(dev|proc)(\/|$)/.test(dir)) return undefined;
  return regular ? `a file under ${dir}` : "a pipe or a device, not a file in a directory";
}
