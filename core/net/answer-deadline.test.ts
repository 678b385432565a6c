import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { answerStarted, armAnswerDeadline } from "./answer-deadline.ts";

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
});
