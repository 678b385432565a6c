// The SQLite store's group commits, in a worker thread with its own connection to the file. A one-record commit
// (BEGIN, three B-tree inserts, COMMIT's writes and locks) cost ~40 µs of the event loop's CPU per response under
// load (bench/README.md, issue 11); handing the batch to this thread costs the event loop a structured clone and one
// message back. Durability is unchanged: the store resolves a write only after this thread's COMMIT returned (WAL,
// synchronous=NORMAL: in the OS before the answer goes out, so kill -9 of the gateway loses nothing it answered).
import { Worker } from "node:worker_threads";
import { createRequire } from "node:module";

/** One write in a batch: a ledger row (its columns in COLUMNS order) or a finished idempotency record. */
export type WriteOp = ["ledger", unknown[]] | ["idempotency", string, string, string, number];

/** Plain CommonJS (an eval worker needs no TypeScript loader); better-sqlite3 is resolved by the parent. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 5000 });
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.pragma("wal_autocheckpoint = 0"); // the checkpointer thread copies pages into the main file
const ledger = db.prepare(workerData.insertLedger);
const idem = db.prepare(workerData.insertIdempotency);
const commit = db.transaction((ops) => {
  const changes = new Array(ops.length);
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    changes[i] = op[0] === "ledger" ? ledger.run(op[1]).changes : idem.run(op[1], op[2], op[3], op[4]).changes;
  }
  return changes;
});
parentPort.on("message", (m) => {
  if (m === "close") {
    db.close();
    parentPort.close();
    return;
  }
  try {
    parentPort.postMessage({ id: m.id, changes: commit(m.ops) });
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: String(err && err.message || err) });
  }
});
parentPort.postMessage("ready");
`;

const driver = createRequire(import.meta.url).resolve("better-sqlite3");

interface Pending { resolve(changes: number[]): void; reject(err: Error): void }

export class SqliteWriter {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private dead?: Error;
  private closing = false;
  private readonly exited: Promise<void>;

  /** `onFail` runs once if the thread cannot open the file or dies: the store then commits on its own connection. */
  constructor(path: string, sql: { insertLedger: string; insertIdempotency: string }, private readonly onFail: (err: Error) => void) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver, ...sql } });
    this.worker.unref(); // only writes in flight keep the process alive (see send)
    this.worker.on("message", (m: "ready" | { id: number; changes?: number[]; error?: string }) => {
      if (m === "ready") return;
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (!this.pending.size) this.worker.unref();
      if (m.error !== undefined) p.reject(new Error(`SQLite write failed: ${m.error}`));
      else p.resolve(m.changes!);
    });
    this.worker.on("error", (err) => this.fail(err));
    this.exited = new Promise((resolve) => this.worker.once("exit", () => resolve()));
    void this.exited.then(() => { if (!this.closing) this.fail(new Error("SQLite writer thread exited")); });
  }

  get failed(): boolean {
    return this.dead !== undefined;
  }

  /** Commit the ops in one transaction; resolves with each op's `changes` (0 for an ignored duplicate). */
  write(ops: WriteOp[]): Promise<number[]> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) this.worker.ref(); // a write in flight keeps the process up until it is durable
      this.worker.postMessage({ id, ops });
    });
  }

  private fail(err: Error): void {
    if (this.dead) return;
    this.dead = err;
    // Writes in flight: the thread died before answering, so whether they committed is unknown; their callers
    // get the error (a retried ledger record is ignored as a duplicate by its generation id).
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.onFail(err);
  }

  /** After the last write was answered: close the thread's connection before the store closes its own. */
  async close(): Promise<void> {
    if (this.closing) return this.exited;
    this.closing = true;
    this.worker.ref();
    if (this.dead) await this.worker.terminate();
    else this.worker.postMessage("close");
    await this.exited;
  }
}
