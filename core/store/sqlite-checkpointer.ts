// WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit crosses 1 000 WAL
// pages and fsyncs there, on the event loop: single commits stalled up to 140 ms under load (bench/README.md,
// issue 11). The store turns auto-checkpointing off and this worker thread, with its own connection to the file,
// runs a PASSIVE checkpoint (never blocks the writer, never waits for readers) at most once a second after writes.
// Durability is unchanged: every commit is in the WAL before the store resolves it; a checkpoint only copies
// committed pages into the main file. If the worker fails, the store turns auto-checkpointing back on.
// A checkpoint that could not copy every page (another connection held the checkpoint lock, or a reader still reads
// older pages: `sqlite3`, the `usage` command, a backup) is tried again after the same delay, so the last writes
// before a quiet spell do not stay in the WAL until the next write.
import { Worker } from "node:worker_threads";
import { createRequire } from "node:module";

/** Plain CommonJS (an eval worker needs no TypeScript loader); better-sqlite3 is resolved by the parent. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 5000 });
let timer;
const run = () => {
  timer = undefined;
  let left = false;
  try {
    const [r] = db.pragma("wal_checkpoint(PASSIVE)");
    left = r.busy !== 0 || r.checkpointed < r.log;
  } catch {}
  if (left) timer = setTimeout(run, workerData.delayMs);
  else parentPort.postMessage("done");
};
parentPort.on("message", (m) => {
  if (m === "close") {
    if (timer) clearTimeout(timer);
    db.close();
    parentPort.close();
    return;
  }
  if (!timer) timer = setTimeout(run, workerData.delayMs);
});
parentPort.postMessage("ready");
`;

const driver = createRequire(import.meta.url).resolve("better-sqlite3");

export class Checkpointer {
  private readonly worker: Worker;
  /** A checkpoint is scheduled or running: later writes need no message of their own until it is done. */
  private pending = false;
  /** A write while pending: it may have committed after the checkpoint began, so another one follows. */
  private wroteSince = false;
  private failed = false;
  private readonly exited: Promise<void>;

  /** `onFail` runs once if the worker cannot open the file or dies: the caller restores auto-checkpointing. */
  constructor(path: string, onFail: (err: unknown) => void, delayMs = 1000) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver, delayMs } });
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
