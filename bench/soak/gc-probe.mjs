// Preloaded into the soak run's gateway (with --expose-gc): on SIGUSR2 it runs a full GC and prints the live heap
// as `GC {"heapUsed":N,"rss":N}` on stdout — the only leak-free measure of retained JS objects, since heap used
// sampled at random moments is a GC sawtooth. With MG_SOAK_SNAPSHOT_DIR set it also writes a heap snapshot there
// (compare two with bench/soak/heap-diff.ts). Plain JS: it is loaded with --import before tsx.
import { writeHeapSnapshot } from "node:v8";
import { join } from "node:path";

let n = 0;
process.on("SIGUSR2", () => {
  globalThis.gc?.();
  const m = process.memoryUsage();
  const dir = process.env.MG_SOAK_SNAPSHOT_DIR;
  const snapshot = dir ? writeHeapSnapshot(join(dir, `soak-${process.pid}-${++n}.heapsnapshot`)) : undefined;
  process.stdout.write(`GC ${JSON.stringify({ heapUsed: m.heapUsed, rss: m.rss, snapshot })}\n`);
});
