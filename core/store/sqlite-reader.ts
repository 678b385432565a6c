// The operator plane's reads of a SQLite ledger (usage from rollups, request search) off the event loop: a worker
// thread with its own read-only connection runs them, so a year's report never stalls the requests being served
// (better-sqlite3 is synchronous). WAL mode lets it read while the store writes, and it sees every committed record.
// A read that outlives its bound terminates the worker (that is the only way to stop a running SQLite statement);
// the next read starts a new one. The bound is counted as every bound in the gateway is (core/deadline.ts): a read
// answered while the gateway's own loop was busy is read, not thrown away with the thread and the reads beside it.
import { Worker } from "node:worker_threads";
import { createRequire } from "node:module";
import { afterBound } from "../deadline.ts";

/** Plain CommonJS (an eval worker needs no TypeScript loader); better-sqlite3 is resolved by the parent. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { readonly: true, fileMustExist: true, timeout: 5000 });
const statements = new Map();
parentPort.on("message", ({ id, sql, params }) => {
  try {
    let s = statements.get(sql);
    if (!s) {
      if (statements.size > 200) statements.clear();
      statements.set(sql, (s = db.prepare(sql).safeIntegers(true)));
    }
    parentPort.postMessage({ id, rows: s.all(...params) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});
`;

const driver = createRequire(import.meta.url).resolve("better-sqlite3");

/** Starts the reader thread from its source and data (tests wrap it to count the thread's answers). */
export type SpawnReader = (source: string, workerData: { path: string; driver: string }) => Worker;

const spawnWorker: SpawnReader = (source, workerData) => new Worker(source, { eval: true, workerData });

interface Pending { resolve(rows: Record<string, unknown>[]): void; reject(err: Error): void; cancel(): void }

export class SqliteReader {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private closed = false;

  constructor(private readonly path: string, private readonly timeoutMs = 30_000, private readonly spawn = spawnWorker) {}

  /** All rows of one query (integers as bigints, like the store's own statements). */
  all(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
    if (this.closed) return Promise.reject(new Error("the SQLite store is closed"));
    const w = this.start();
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      const cancel = afterBound(this.timeoutMs, () => this.restart(new Error(`the ledger query did not finish within ${this.timeoutMs} ms`)));
      this.pending.set(id, { resolve, reject, cancel });
      w.postMessage({ id, sql, params });
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = this.spawn(WORKER_SOURCE, { path: this.path, driver });
    w.unref(); // never keeps a process alive
    w.on("message", (m: { id: number; rows?: Record<string, unknown>[]; error?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      p.cancel();
      if (m.error !== undefined) p.reject(new Error(m.error));
      else p.resolve(m.rows!);
    });
    w.on("error", (err) => this.restart(err));
    w.on("exit", () => {
      if (this.worker === w) this.restart(new Error("the ledger reader thread exited"));
    });
    return (this.worker = w);
  }

  /** Fail what is waiting and drop the worker; the next read starts another. */
  private restart(err: Error): void {
    const w = this.worker;
    this.worker = undefined;
    for (const p of this.pending.values()) {
      p.cancel();
      p.reject(err);
    }
    this.pending.clear();
    void w?.terminate();
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.restart(new Error("the SQLite store is closed"));
    await w?.terminate();
  }
}
