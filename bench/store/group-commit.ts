// The SQLite store's group commits as the event loop sees them (issue 11): 30 000 ledger records through
// SqliteStore.record in batches of B (what one event-loop turn of a busy gateway hands in), timing each synchronous
// flush — the time the event loop is blocked (and each move from the ledger journal, where there is one) — and the main thread's own CPU (/proc/self/schedstat, on-CPU only, so
// work on other threads such as the WAL checkpointer is not in it). Run it against two checkouts, alternately, for
// a before/after:
//   npx tsx bench/store/group-commit.ts /tmp/mg-before 5 && npx tsx bench/store/group-commit.ts "$PWD" 5
import { readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { tmpdir } from "node:os";
import type { LedgerEntry } from "../../core/store/types.ts";

const root = resolve(process.argv[2] ?? ".");
const batch = Number(process.argv[3] ?? 5);
const N = 30_000;
const { SqliteStore } = (await import(join(root, "core/store/sqlite.ts"))) as typeof import("../../core/store/sqlite.ts");
const entry = (i: number): LedgerEntry => ({
  generationId: `gen-${i}-${Math.random()}`, requestId: `req-${i}`, ts: Date.now(), keyId: "k", project: "p", endpoint: "chat", model: "m",
  provider: "fake", attempts: 1, inputTokens: 10, outputTokens: 50, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0,
  videoSeconds: 0, searchUnits: 0, costUsd: "0.0000315", costPico: 31_500_000n, latencyMs: 3.2, ttftMs: 1.1, status: 200, outcome: "ok",
  sandbox: false, estimated: false,
});
const mainThreadNs = () => Number(readFileSync("/proc/self/schedstat", "utf8").split(" ")[0]);

const path = join(tmpdir(), `mg-group-commit-${process.pid}.db`);
const store = new SqliteStore(path);
const internals = store as unknown as { flush(): void; moveChunk?: () => number };
const flush = internals.flush.bind(store);
const blocked: number[] = [];
internals.flush = () => {
  const t = performance.now();
  flush();
  blocked.push(performance.now() - t);
};
// Moves from the ledger journal into the ledger (checkouts that have one), timed the same way.
const moved: number[] = [];
const moveChunk = internals.moveChunk;
if (moveChunk) {
  internals.moveChunk = () => {
    const t = performance.now();
    const n = moveChunk();
    if (n) moved.push(performance.now() - t);
    return n;
  };
}
const c0 = mainThreadNs();
const t0 = performance.now();
for (let i = 0; i < N; i += batch) {
  await Promise.all(Array.from({ length: batch }, (_, j) => store.record(entry(i + j))));
  // Let timers and the checkpointer's messages run now and then, as they would in a server.
  if (i % 500 === 0) await new Promise((r) => setTimeout(r, 1));
}
const wall = performance.now() - t0;
const cpu = mainThreadNs() - c0;
await store.close();
for (const x of ["", "-wal", "-shm"]) rmSync(path + x, { force: true });

blocked.sort((a, b) => a - b);
moved.sort((a, b) => a - b);
const q = (p: number, of = blocked) => of[Math.floor(p * (of.length - 1))]!;
const us = (ms: number) => (ms * 1000).toFixed(0);
console.log(
  `${root}  batch ${batch}: ${blocked.length} commits; event loop blocked ${((blocked.reduce((a, b) => a + b, 0) / N) * 1000).toFixed(1)} us per record, ` +
    `per commit p50 ${us(q(0.5))} us p99 ${us(q(0.99))} us max ${q(1).toFixed(1)} ms, ${blocked.filter((t) => t > 10).length} over 10 ms; ` +
    `main-thread CPU ${(cpu / N / 1000).toFixed(1)} us per record; wall ${((wall / N) * 1000).toFixed(1)} us per record` +
    (moved.length
      ? `; ${moved.length} journal moves blocked ${((moved.reduce((a, b) => a + b, 0) / N) * 1000).toFixed(1)} us per record, per move p50 ${us(q(0.5, moved))} us p99 ${us(q(0.99, moved))} us max ${q(1, moved).toFixed(1)} ms`
      : ""),
);
