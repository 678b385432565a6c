import { afterEach, describe, expect, it, vi } from "vitest";
import { settleWithin } from "./deadline.ts";
import { AnsweringThread, holdLoop } from "./busy-loop.testkit.ts";

/** A worker thread answering each message with itself, as the SQLite store's threads answer its calls. */
const ECHO = `const { parentPort, workerData } = require("node:worker_threads");
parentPort.on("message", (m) => { parentPort.postMessage(m); answered(workerData); });`;

const threads: AnsweringThread[] = [];
afterEach(async () => {
  while (threads.length) await threads.pop()!.close();
});

describe("settleWithin", () => {
  it("gives the promise's value when it settles first, and leaves no timer behind", async () => {
    vi.useFakeTimers();
    try {
      const onExpiry = vi.fn(() => "late");
      await expect(settleWithin(Promise.resolve(7), 1000, onExpiry)).resolves.toBe(7);
      expect(vi.getTimerCount()).toBe(0);
      expect(onExpiry).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });

  it("passes the promise's rejection through when it comes first", async () => {
    await expect(settleWithin(Promise.reject(new Error("store down")), 1000, () => "late")).rejects.toThrow("store down");
  });

  it("gives what onExpiry returns once ms pass first", async () => {
    vi.useFakeTimers();
    try {
      const answer = settleWithin(new Promise<number>(() => {}), 300, () => false);
      await vi.advanceTimersByTimeAsync(299);
      let settled = false;
      void answer.then(() => (settled = true));
      await Promise.resolve();
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await expect(answer).resolves.toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it("rejects with what onExpiry throws", async () => {
    await expect(settleWithin(new Promise(() => {}), 5, () => { throw new Error("took longer than 5 ms"); })).rejects.toThrow("took longer than 5 ms");
  });

  it("an answer that came while the event loop was busy past the bound is the answer, not the expiry", async () => {
    const echo = new AnsweringThread(ECHO);
    threads.push(echo);
    echo.worker.postMessage("warm up");
    await echo.message(); // the thread is running
    // Off the port's own callback (which reads every message queued meanwhile before returning), as a request
    // handler is.
    await new Promise((r) => setImmediate(r));
    const onExpiry = vi.fn(() => "timed out");
    const answer = echo.message<string>();
    const t0 = performance.now();
    const call = settleWithin(answer, 100, onExpiry);
    const seen = echo.answers();
    echo.worker.postMessage("the store's answer");
    holdLoop(t0, 250, { thread: echo, seen }); // the answer is waiting in the port, the bound long past
    await expect(call).resolves.toBe("the store's answer");
    expect(onExpiry).not.toHaveBeenCalled();
  });

  it("a call the busy loop could only send after the bound (SQLite's commit waits for the check phase) gets the time back", async () => {
    const echo = new AnsweringThread(ECHO);
    threads.push(echo);
    echo.worker.postMessage("warm up");
    await echo.message();
    await new Promise((r) => setImmediate(r));
    const answer = echo.message<string>();
    const t0 = performance.now();
    const call = settleWithin(answer, 100, () => "timed out");
    setImmediate(() => {
      const seen = echo.answers();
      echo.worker.postMessage("committed");
      holdLoop(performance.now(), 0, { thread: echo, seen }); // the answer is waiting in the port
    });
    holdLoop(t0, 250); // the bound passes before the call is even sent
    await expect(call).resolves.toBe("committed");
  });

  it("a call that never answers still ends, on a loop that never idles", async () => {
    let busy = true;
    const churn = () => {
      holdLoop(performance.now(), 30); // each turn of the loop busy for longer than it is free
      if (busy) setImmediate(churn);
    };
    churn();
    try {
      await expect(settleWithin(new Promise(() => {}), 50, () => "timed out")).resolves.toBe("timed out");
    } finally {
      busy = false;
    }
  });
});
