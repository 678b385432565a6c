// For the config tests: a gateway.yaml written to a fresh directory, and the problems loading it reports.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "./load.ts";
import { ConfigError, formatProblem } from "./source.ts";

export function write(text: string, name = "gateway.yaml", dir = mkdtempSync(join(tmpdir(), "mg-cfg-"))): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** Every problem loading `text` reports, as `check` prints it, with the file's path written F. */
export async function problems(text: string, env: Record<string, string> = {}): Promise<string[]> {
  const file = write(text);
  try {
    await loadConfig(file, { env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => formatProblem(p).replaceAll(file, "F"));
    throw err;
  }
  return [];
}
