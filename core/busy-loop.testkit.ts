// For tests of bounds on a busy event loop: an answer that comes from another thread (a worker's message, bytes its
// server writes to a socket) while this thread's loop is held up, and a hold that lasts until it has come. No timing
// guesses: the other thread counts what it has answered in shared memory, and the hold waits on that count.
import { Worker } from "node:worker_threads";

/** Longest the hold waits for the other thread (a thread that never answers fails the test, not hangs it). */
const ANSWER_WAIT_MS = 10_000;

/**
 * A worker thread running `source` (CommonJS). Its workerData is a shared Int32Array: the thread adds 1 to element 0
 * (and notifies) each time an answer of its has left it (`answered(answered)` in the source).
 */
export class AnsweringThread {
  private readonly count = new Int32Array(new SharedArrayBuffer(4));
  readonly worker: Worker;

  constructor(source: string) {
    const prelude = "const answered = (a) => { Atomics.add(a, 0, 1); Atomics.notify(a, 0); };\n";
    this.worker = new Worker(prelude + source, { eval: true, workerData: this.count });
  }

  /** How many answers have left the thread so far. */
  answers(): number {
    return Atomics.load(this.count, 0);
  }

  /** The next message the thread posts. */
  message<T>(): Promise<T> {
    return new Promise((resolve, reject) => {
      this.worker.once("message", resolve);
      this.worker.once("error", reject);
    });
  }

  /** Blocks this thread until the other one has given more than `seen` answers. */
  waitForAnswer(seen: number): void {
    const giveUp = performance.now() + ANSWER_WAIT_MS;
    while (this.answers() <= seen) {
      const left = giveUp - performance.now();
      if (left <= 0) throw new Error(`the worker thread gave no answer within ${ANSWER_WAIT_MS} ms`);
      Atomics.wait(this.count, 0, seen, left);
    }
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

/**
 * The event loop held up (a big body parsed, a GC pause, a saturated host): nothing else runs on this thread until
 * `thread` has answered more than `seen` times, if given, and `ms` have passed since `from` (performance.now()).
 */
export function holdLoop(from: number, ms: number, until?: { thread: AnsweringThread; seen: number }): void {
  until?.thread.waitForAnswer(until.seen);
  while (performance.now() - from < ms); // busy, as a parse or a GC is
}
