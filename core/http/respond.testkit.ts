// For the relay tests (respond*.test.ts): a real HTTP server answering every request with writeResponse(events).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterEach } from "vitest";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { writeResponse } from "./respond.ts";
import type { GatewayContext, Outcome } from "../pipeline/context.ts";
import type { SseEvent } from "../sse/parse.ts";

export const streamCtx = (events: AsyncIterable<SseEvent>): GatewayContext => ({
  requestId: "req_test", generationId: "gen_test", protocol: "openai", responseHeaders: {}, attempts: [], startedAt: performance.now(),
  signal: new AbortController().signal, response: { kind: "stream", status: 200, events },
} as unknown as GatewayContext);

/** Listening on a free port: its URL, and the relay's outcome once writeResponse resolves. */
export async function serveEvents(events: AsyncIterable<SseEvent>): Promise<{ server: Server; url: string; outcome: Promise<Outcome> }> {
  let settle!: (o: Outcome) => void;
  const outcome = new Promise<Outcome>((r) => (settle = r));
  const server = createServer((_req: IncomingMessage, res: ServerResponse) => void writeResponse(streamCtx(events), res, { firstByte() {} }).then(settle));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, outcome };
}

export async function closeServer(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
}

/** For a test file: `const serve = servePerTest();` — each test's server is closed after it. */
export function servePerTest(): (events: AsyncIterable<SseEvent>) => Promise<{ url: string; outcome: Promise<Outcome> }> {
  let server: Server | undefined;
  afterEach(async () => {
    await closeServer(server);
    server = undefined;
  });
  return async (events) => {
    const s = await serveEvents(events);
    server = s.server;
    return s;
  };
}

/** Serves `events` and records what each flush of the response socket carried (one flush is one write system call). */
export async function serveCountingFlushes(events: AsyncIterable<SseEvent>) {
  const s = await serveEvents(events);
  return { ...s, flushes: countFlushes(s.server) };
}

/** What each flush of the server's sockets carried, in order (one flush is one write system call). */
export function countFlushes(server: Server): string[] {
  const flushes: string[] = [];
  server.on("connection", (socket: any) => {
    const writev = socket._writev, write = socket._write;
    socket._writev = function (chunks: { chunk: Buffer | string }[], cb: () => void) {
      flushes.push(chunks.map((c) => c.chunk.toString()).join(""));
      return writev.call(this, chunks, cb);
    };
    socket._write = function (chunk: Buffer | string, enc: BufferEncoding, cb: () => void) {
      flushes.push(chunk.toString());
      return write.call(this, chunk, enc, cb);
    };
  });
  return flushes;
}
