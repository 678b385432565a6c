// `npm run bench [-- NAME...]`: every bench/*.bench.ts (or those whose file name contains a NAME), one child
// process each, in order — a fresh process per suite so one suite's JIT and heap state cannot colour another's.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { cpus, loadavg } from "node:os";

const dir = fileURLToPath(new URL(".", import.meta.url));
const names = process.argv.slice(2);
const files = readdirSync(dir).filter((f) => f.endsWith(".bench.ts") && (!names.length || names.some((n) => f.includes(n)))).sort();
if (!files.length) {
  process.stderr.write(`no bench/*.bench.ts matches ${names.join(", ")}\n`);
  process.exit(1);
}
process.stdout.write(`node ${process.version}, ${cpus().length} cpus, loadavg ${loadavg().map((l) => l.toFixed(2)).join(" ")} — ratios compare tasks timed in the same process\n\n`);
let failed = 0;
for (const f of files) {
  process.stdout.write(`### ${f}\n`);
  const r = spawnSync(process.execPath, ["--import", "tsx", join(dir, f)], { stdio: "inherit" });
  if (r.status !== 0) {
    failed++;
    process.stderr.write(`${f} failed (exit ${r.status ?? r.signal})\n`);
  }
}
process.exit(failed ? 1 : 0);
