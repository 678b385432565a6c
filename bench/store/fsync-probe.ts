// What one durable commit costs on this disk, outside the gateway (issue 32): N pages written to a file, then
// fdatasync through libuv's thread pool, as the SQLite store does for its write-ahead log. Prints wall time and the
// process's CPU (user + system) per round. A ledger record committed alone writes ~8 pages; the gateway cannot answer
// sooner than this after its upstream has. Run it where the store's file will live:
//   npx tsx bench/store/fsync-probe.ts ./data [rounds]
import { closeSync, fdatasync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";

const dir = mkdtempSync(join(resolve(process.argv[2] ?? "."), ".fsync-probe-"));
const rounds = Number(process.argv[3] ?? 400);
const PAGE = 4096;
const SPAN = 64; // pages the rounds overwrite in turn, as SQLite reuses its write-ahead log after a checkpoint
const page = Buffer.alloc(PAGE, 7);
const fd = openSync(join(dir, "probe.bin"), "w+");
const sync = () => new Promise<void>((done, fail) => fdatasync(fd, (err) => (err ? fail(err) : done())));

try {
  for (let p = 0; p < SPAN; p++) writeSync(fd, page, 0, PAGE, p * PAGE);
  fdatasyncSync(fd);
  console.log(`fdatasync probe in ${dir}: ${rounds} rounds each`);
  for (const pages of [0, 1, 8, 32]) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < rounds; i++) {
      for (let p = 0; p < pages; p++) writeSync(fd, page, 0, PAGE, ((i + p) % SPAN) * PAGE);
      await sync();
    }
    const cpu = process.cpuUsage(cpu0);
    const ms = (us: number) => (us / rounds / 1000).toFixed(3);
    console.log(`${String(pages).padStart(2)} pages + fdatasync: ${((performance.now() - t0) / rounds).toFixed(3)} ms wall, ` +
      `${ms(cpu.user + cpu.system)} ms CPU (user ${ms(cpu.user)}, system ${ms(cpu.system)}) per round`);
  }
} finally {
  closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
}
