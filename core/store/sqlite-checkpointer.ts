// WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit crosses 1 000 WAL
// pages and fsyncs there, on the event loop: single commits stalled up to 140 ms under load (bench/README.md,
// issue 11). The store turns auto-checkpointing off and this worker thread, with its own connection to the file,
// runs a PASSIVE checkpoint (never blocks the writer, never waits for readers) at most once a second after writes,
// sooner when the log grows fast. Durability is unchanged: every commit is in the WAL before the store resolves it;
// a checkpoint only copies committed pages into the main file. If the worker fails, the store turns
// auto-checkpointing back on.
// A checkpoint that could not copy every page (another connection held the checkpoint lock, or a reader still reads
// older pages: `sqlite3`, the `usage` command, a backup) is tried again without another write, so the last writes
// before a quiet spell do not stay in the WAL until the next write.
// The WAL is bounded. A writer starts the log over only when it finds every frame copied, which never happens under
// steady writes (frames arrive while a PASSIVE checkpoint copies): the file grew for as long as writes went on
// (3.3 GiB beside a 296 MiB database after a minute of Responses traffic). Once the log holds half of
// `walLimitBytes`, the worker copies it with PASSIVE passes until little is left, then runs a RESTART checkpoint: it
// takes the write lock (the store's commits wait behind it while it copies that little and fsyncs: a few ms) and
// waits for readers at most LOCK_WAIT_MS, so the next commit starts the log over and truncates the file to
// `walLimitBytes` (journal_size_limit, set by the store). A quiet second truncates a WAL file over 1/16 of it.
import { Worker } from "node:worker_threads";
import { createRequire } from "node:module";

/** Plain CommonJS (an eval worker needs no TypeScript loader); better-sqlite3 is resolved by the parent. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { statSync } = require("node:fs");
const Database = require(workerData.driver);
const { path, delayMs, walLimitBytes, lockWaitMs } = workerData;
const db = new Database(path, { timeout: 5000 });
db.pragma("journal_size_limit = " + walLimitBytes);
const frameBytes = db.pragma("page_size", { simple: true }) + 24;
const restartAt = walLimitBytes / 2;
// What the RESTART may have left to copy under the write lock: a few ms of I/O.
const tailBytes = Math.min(256 << 10, walLimitBytes / 8);
let timer, idle, watch;
// The log after the last checkpoint, and when: how fast it grows sets the next delay, so it is restarted in time.
let lastLog = 0, lastAt = Date.now(), nextDelay = delayMs;
// RESTARTs in a row that could not take the write lock or outwait a reader: each waits twice as long as the last.
let refused = 0;
const walFileBytes = () => { try { return statSync(path + "-wal").size; } catch { return 0; } };
const checkpoint = (mode) => db.pragma("wal_checkpoint(" + mode + ")")[0];
// A RESTART or TRUNCATE holds the write lock while it waits for readers: a short wait, then it gives up until later.
const locked = (mode) => {
  db.pragma("busy_timeout = " + lockWaitMs);
  try { return checkpoint(mode); } finally { db.pragma("busy_timeout = 5000"); }
};
const schedule = (ms, early) => {
  timer = setTimeout(run, ms);
  // A burst after a quiet spell (the delay was set for that) runs the checkpoint early once the file passes the limit.
  if (early && ms > 50) watch = setInterval(() => { if (walFileBytes() > walLimitBytes) { clearTimeout(timer); run(); } }, 50);
};
const run = () => {
  timer = undefined;
  if (watch) clearInterval(watch);
  watch = undefined;
  let left = false;
  try {
    let r = checkpoint("PASSIVE");
    // Growth since the last checkpoint (a log that started over counts from zero).
    const grew = (r.log >= lastLog ? r.log - lastLog : r.log) * frameBytes;
    const rate = grew / Math.max(1, Date.now() - lastAt);
    nextDelay = rate > 0 ? Math.min(delayMs, Math.max(20, restartAt / 2 / rate)) : delayMs;
    if (r.log * frameBytes >= restartAt) {
      // Without the lock, copy what came in meanwhile until a pass finds little new (or the log started over).
      for (let i = 0; i < 4 && r.busy === 0; i++) {
        const before = r.log;
        r = checkpoint("PASSIVE");
        if (r.log < before || (r.log - before) * frameBytes <= tailBytes) break;
      }
      if (r.log * frameBytes >= restartAt) {
        r = locked("RESTART");
        refused = r.busy !== 0 ? refused + 1 : 0;
        if (!refused) r = { busy: 0, log: 0, checkpointed: 0 }; // the next commit starts the log over
      }
    }
    left = r.busy !== 0 || r.checkpointed < r.log;
    lastLog = r.log;
  } catch {}
  lastAt = Date.now();
  // Pages left (a reader on older pages, a commit meanwhile) are tried again without another write. A RESTART
  // refused again and again (a long read: a report, an operator's sqlite3) is tried less and less often, since each
  // try holds the write lock for up to lockWaitMs.
  if (left) schedule(Math.min(delayMs, nextDelay * 2 ** refused), !refused);
  else {
    parentPort.postMessage("done");
    idle = setTimeout(quiet, delayMs);
  }
};
// No write for a while after a checkpoint: a WAL file over a sixteenth of the limit is emptied (a writer would
// truncate it to the limit only at its next commit).
const quiet = () => {
  idle = undefined;
  try { if (walFileBytes() > walLimitBytes / 16) locked("TRUNCATE"); } catch {}
};
parentPort.on("message", (m) => {
  if (m === "close") {
    if (timer) clearTimeout(timer);
    if (idle) clearTimeout(idle);
    if (watch) clearInterval(watch);
    db.close();
    parentPort.close();
    return;
  }
  if (idle) clearTimeout(idle);
  idle = undefined;
  if (!timer) schedule(nextDelay, true);
});
parentPort.postMessage("ready");
`;

const driver = createRequire(import.meta.url).resolve("better-sqlite3");

/** The WAL file's bound under steady writes (the store's journal_size_limit); a RESTART begins at half of it. */
export const WAL_LIMIT_BYTES = 64 * 1024 * 1024;
/** How long a RESTART or TRUNCATE checkpoint, holding the write lock, waits for readers before it gives up. */
const LOCK_WAIT_MS = 20;

export class Checkpointer {
  private readonly worker: Worker;
  /** A checkpoint is scheduled or running: later writes need no message of their own until it is done. */
  private pending = false;
  /** A write while pending: it may have committed after the checkpoint began, so another one follows. */
  private wroteSince = false;
  private failed = false;
  private readonly exited: Promise<void>;

  /** `onFail` runs once if the worker cannot open the file or dies: the caller restores auto-checkpointing. */
  constructor(path: string, onFail: (err: unknown) => void, opts: { delayMs?: number; walLimitBytes?: number } = {}) {
    const workerData = { path, driver, delayMs: opts.delayMs ?? 1000, walLimitBytes: opts.walLimitBytes ?? WAL_LIMIT_BYTES, lockWaitMs: LOCK_WAIT_MS };
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
    // Never keeps a process alive (the `usage` command, tests that open a store and leave).
    this.worker.unref();
    this.worker.on("message", (m) => {
      if (m !== "done") return;
      this.pending = false;
      if (this.wroteSince) this.wrote();
    });
    const fail = (err: unknown) => {
      if (this.failed) return;
      this.failed = true;
      onFail(err);
    };
    this.worker.on("error", fail);
    this.exited = new Promise((resolve) => this.worker.once("exit", () => resolve()));
    this.exited.then(() => { if (!this.closing) fail(new Error("checkpoint worker exited")); });
  }

  private closing = false;

  /** Called after each commit: schedule one checkpoint unless one is already on its way. */
  wrote(): void {
    if (this.failed || this.closing) return;
    if (this.pending) {
      this.wroteSince = true;
      return;
    }
    this.pending = true;
    this.wroteSince = false;
    this.worker.postMessage("go");
  }

  /** Close the worker's connection first, so the store's own close is the last one (it checkpoints and removes the WAL). */
  async close(): Promise<void> {
    if (this.closing) return this.exited;
    this.closing = true;
    this.worker.ref(); // a shutdown waits for the worker's close
    if (this.failed) await this.worker.terminate();
    else this.worker.postMessage("close");
    await this.exited;
  }
}
