// The upstream timeout on the gateway's own clock: real HTTP servers, the real UpstreamClient (undici underneath).
import { afterEach, describe, expect, it } from "vitest";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { UpstreamClient } from "./http.ts";
import { bytesRead, watchedCalls, WATCH_TICK_MS } from "./upstream-watch.ts";
import { RequestAbort } from "../core/net/request-abort.ts";
import { AnsweringThread, holdLoop } from "../core/busy-loop.testkit.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * Late allowed past a bound: two ticks, plus what the event loop was held up meanwhile (the watch looks on a timer and
 * the error comes back through more of them, so a loaded machine makes it that late: a fixed 60 ms failed with files
 * running side by side, 423 ms for a 300 ms bound). On an idle machine that is a few ms: a second late still fails.
 */
const LOOK_MS = 10;
function lateness(): () => Promise<number> {
  const delay = monitorEventLoopDelay({ resolution: LOOK_MS });
  delay.enable();
  return async () => {
    await sleep(25); // the monitor's timer, due before this one, records a delay that ended just now
    delay.disable();
    const heldUp = ((delay.mean - LOOK_MS * 1e6) * delay.count) / 1e6; // each sample is one look's interval, in ns
    return 2 * WATCH_TICK_MS + Math.max(0, heldUp) + 20;
  };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(() => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
}

function client(timeoutMs: number): UpstreamClient {
  const c = new UpstreamClient("slowpoke", { timeoutMs });
  cleanups.push(() => c.close());
  return c;
}

const send = (c: UpstreamClient, url: string, signal = new AbortController().signal) => c.send({ url, headers: {}, body: "{}" }, signal);

async function drain(body: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of body);
}

/**
 * An upstream on another thread (its own event loop, as a remote server has), writing only when told: "headers" (and
 * a first chunk), "chunk", "end". It posts its port, then "request" when a request came; each write counts as an
 * answer once it has left for the socket.
 */
async function upstreamThread(): Promise<{ thread: AnsweringThread; url: string }> {
  const thread = new AnsweringThread(`const { parentPort, workerData } = require("node:worker_threads");
const { createServer } = require("node:http");
let res;
const server = createServer((req, r) => { req.resume(); res = r; parentPort.postMessage("request"); });
parentPort.on("message", (m) => {
  if (m === "headers") res.writeHead(200, { "content-type": "text/event-stream" });
  if (m === "end") res.end(() => answered(workerData));
  else res.write('data: {"n":1}\\n\\n', () => answered(workerData));
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage(server.address().port));`);
  cleanups.push(async () => void (await thread.close()));
  const port = await thread.message<number>();
  return { thread, url: `http://127.0.0.1:${port}/v1/chat/completions` };
}

describe("upstream timeout_ms on the gateway's clock", () => {
  it("no response headers: the call ends with UPSTREAM_TIMEOUT at the bound, not up to a second later", async () => {
    const url = await serve(() => {}); // never answers
    for (const ms of [300, 1200]) {
      const slack = lateness();
      const t0 = performance.now();
      const err = await send(client(ms), url).catch((e) => e);
      const took = performance.now() - t0;
      expect(err).toMatchObject({ status: 504, code: "UPSTREAM_TIMEOUT", details: { reason: "headers_timeout", timeout_ms: ms } });
      expect(took).toBeGreaterThanOrEqual(ms - 1);
      expect(took).toBeLessThan(ms + (await slack()));
    }
  });

  it("a stream that goes silent after a chunk is cut at the bound after that chunk", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: {}\n\n"); // then nothing, connection open
    });
    const r = await send(client(300), url);
    const slack = lateness();
    const t0 = performance.now();
    const err = await drain(r.body).catch((e) => e);
    const took = performance.now() - t0;
    expect(err).toMatchObject({ status: 504, code: "UPSTREAM_TIMEOUT", details: { reason: "body_timeout" } });
    expect(took).toBeGreaterThanOrEqual(299 - 2 * WATCH_TICK_MS); // the chunk may have come just before the headers were handed over
    expect(took).toBeLessThan(300 + (await slack()));
  });

  it("a stream with gaps shorter than the bound is never cut, however long it runs", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      let n = 0;
      const iv = setInterval(() => {
        res.write(`data: {"n":${n}}\n\n`);
        if (++n === 8) {
          clearInterval(iv);
          res.end();
        }
      }, 120);
    });
    const r = await send(client(250), url);
    await drain(r.body); // ~1 s of stream under a 250 ms bound
    expect(bytesRead(r.body)).toBeGreaterThan(0);
  });

  it("headers that came while the gateway's event loop was busy past the bound are the answer, not a timeout", async () => {
    const { thread, url } = await upstreamThread();
    const requested = thread.message();
    const t0 = performance.now();
    const answer = send(client(250), url);
    await requested; // the upstream has the request
    const seen = thread.answers();
    thread.worker.postMessage("headers");
    holdLoop(t0, 400, { thread, seen }); // other work on the loop (another request's big body, a GC) while they come
    const r = await answer;
    thread.worker.postMessage("end");
    await drain(r.body);
    expect(bytesRead(r.body)).toBeGreaterThan(0);
  });

  it("a chunk that came while the gateway's event loop was busy past the bound keeps the stream, not cuts it", async () => {
    const { thread, url } = await upstreamThread();
    const requested = thread.message();
    const answer = send(client(250), url);
    await requested;
    thread.worker.postMessage("headers");
    const r = await answer;
    const chunks = r.body[Symbol.asyncIterator]();
    await chunks.next(); // the first chunk, read
    await sleep(3 * WATCH_TICK_MS); // the watch has seen it come (its interval, due sooner, runs before this timer)
    // Out of the timers phase: the rest of it runs on the clock it read before the hold, so the watch would only look
    // after the poll (as a request handler's work is, in a socket's callback or a check-phase one).
    await new Promise((resolve) => setImmediate(resolve));
    const seen = thread.answers();
    thread.worker.postMessage("chunk");
    holdLoop(performance.now(), 400, { thread, seen });
    thread.worker.postMessage("end");
    let more = 0;
    for (let c = await chunks.next(); !c.done; c = await chunks.next()) more++;
    expect(more).toBeGreaterThan(0);
  });

  it("a reader slower than the bound is not the upstream's silence: what waits unread keeps the call alive", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(Buffer.alloc(1 << 20, 0x20)); // more than the body buffers: undici stops reading the socket
      setTimeout(() => res.end("{}"), 500);
    });
    const r = await send(client(200), url);
    await sleep(700); // nobody reads for 3.5 bounds
    await drain(r.body);
  });

  it("undici's body keeps the byte count the watch reads (an undici without it would leave only its own coarse timer)", async () => {
    const url = await serve((_req, res) => res.end("hello"));
    const r = await send(client(1000), url);
    expect(bytesRead(r.body)).toBeTypeOf("number");
    await drain(r.body);
    expect(bytesRead(r.body)).toBe(5);
  });

  it("the client leaving still aborts the call at once; finished calls are no longer watched", async () => {
    const url = await serve(() => {});
    const abort = new RequestAbort();
    const pending = send(client(5000), url, abort.signal).catch((e) => e);
    await sleep(50);
    const t0 = performance.now();
    abort.abort(new Error("client went away"));
    const err = await pending;
    expect(performance.now() - t0).toBeLessThan(100);
    expect(err).toMatchObject({ code: "CANCELLED" });
    await sleep(3 * WATCH_TICK_MS);
    expect(watchedCalls()).toBe(0);
  });
});
