// Each test file gets its own temp directory, removed when the file ends: TMPDIR, which os.tmpdir() and every process
// a test starts (gateways, redis-server, PostgreSQL) read. Files run side by side (vitest.config.ts maxWorkers), and
// what a test leaves behind (a gateway's config dir, a SQLite file, a spool) no longer piles up in /tmp.
import { afterAll } from "vitest";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// The machine's temp dir, remembered: a worker process that runs a second file must not nest it in the first's.
const base = (process.env.MG_TEST_BASE_TMPDIR ??= tmpdir());
const dir = mkdtempSync(join(base, "mg-file-"));
chmodSync(dir, 0o1777); // like /tmp: the Postgres tests' server runs as the postgres user and makes its socket here
process.env.TMPDIR = dir;

afterAll(() => {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  } catch (err) {
    console.warn(`could not remove the test file's temp dir ${dir}: ${(err as Error).message}`);
  }
});
