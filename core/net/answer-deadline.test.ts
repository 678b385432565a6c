import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { answerStarted, armAnswerDeadline } from "./answer-deadline.ts";
import { AnsweringThread, holdLoop } from "../busy-loop.testkit.ts";

/** A thread answering each message with itself, as an upstream's socket brings its bytes in. */
const ECHO = `const { parentPort, workerData } = require("node:worker_threads");
parentPort.on("message", (m) => { parentPort.postMessage(m); answered(workerData); });`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the answer deadline", () => {
  it("fails a body still open at the deadline, however much it trickled, with the error given", async () => {
    const body = new PassThrough();
    armAnswerDeadline(body, 60, () => new Error("too slow"), false);
    const read = (async () => { for await (const _ of body); })();
    body.write(" ");
    await sleep(30);
    body.write(" ");
    await expect(read).rejects.toThrow("too slow");
  });

  it("destroys a body nobody reads at the deadline without an uncaught error (which would end the process)", async () => {
    const uncaught: unknown[] = [];
    const spy = (err: unknown) => uncaught.push(err);
    process.on("uncaughtException", spy);
    try {
      const body = new PassThrough();
      body.write("{"); // the upstream sent a little, then nobody read on
      armAnswerDeadline(body, 20, () => new Error("too slow"), false);
      await sleep(80); // the deadline passed, and its 'error' had its tick
      expect(body.destroyed).toBe(true);
      expect(body.errored?.message).toBe("too slow");
      expect(uncaught).toEqual([]);
    } finally {
      process.off("uncaughtException", spy);
    }
  });

  it("is off once the body ends, or once a stream's first event was read", async () => {
    const ended = new PassThrough();
    armAnswerDeadline(ended, 30, () => new Error("too slow"), false);
    ended.end("{}");
    for await (const _ of ended);
    const stream = new PassThrough();
    armAnswerDeadline(stream, 30, () => new Error("too slow"), true);
    answerStarted(stream);
    await sleep(60);
    expect(stream.destroyed).toBe(false);
    stream.destroy();
  });

  it("a body that ended while the event loop was busy past the deadline is the answer, not an error", async () => {
    const upstream = new AnsweringThread(ECHO);
    try {
      upstream.worker.postMessage("warm up");
      await upstream.message(); // the thread is running
      await new Promise((r) => setImmediate(r)); // off the port's own callback, as a relay is
      const body = new PassThrough();
      upstream.message<string>().then((last) => body.end(last)); // the answer's last bytes, read in the poll phase
      const read = (async () => {
        let text = "";
        for await (const chunk of body) text += chunk;
        return text;
      })();
      const t0 = performance.now();
      armAnswerDeadline(body, 100, () => new Error("too slow"), false);
      const seen = upstream.answers();
      upstream.worker.postMessage("{}");
      holdLoop(t0, 250, { thread: upstream, seen }); // the bytes are waiting for the loop, the deadline long past
      await expect(read).resolves.toBe("{}");
    } finally {
      await upstream.close();
    }
  });
});
