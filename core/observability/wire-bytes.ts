// Wire bytes per response, from the connection's counters (headers count, as they do on the wire): what the socket
// had read and written when its previous response ended — one request at a time on an HTTP/1.1 connection. Every
// response moves that mark when it ends, logged or not (a health probe, /api/openapi.json, a console page), so the
// next logged request on a keep-alive connection is charged only its own bytes.
import type { IncomingMessage, ServerResponse } from "node:http";

export interface WireBytes {
  bytesIn: number;
  bytesOut: number;
}

interface Counts {
  read: number;
  written: number;
}

/** The counters of a connection when its last response ended, and a response's bytes once taken: properties of the
 * socket and the response (a WeakMap entry per response cost every request a little GC work). */
const MARK = Symbol("wire bytes mark");
const TAKEN = Symbol("wire bytes");
type Marked = { [MARK]?: Counts };
type Taken = { [TAKEN]?: WireBytes };

/** This response's bytes; the first call (once its last byte is written, or the client has gone) moves the mark. */
export function wireBytes(req: IncomingMessage, res: ServerResponse): WireBytes {
  const r = res as ServerResponse & Taken;
  let bytes = r[TAKEN];
  if (bytes) return bytes;
  const socket = req.socket as (typeof req.socket & Marked) | undefined;
  const read = socket?.bytesRead ?? 0;
  const written = socket?.bytesWritten ?? 0;
  const before = socket?.[MARK];
  if (socket) socket[MARK] = { read, written };
  bytes = { bytesIn: Math.max(0, read - (before?.read ?? 0)), bytesOut: Math.max(0, written - (before?.written ?? 0)) };
  r[TAKEN] = bytes;
  return bytes;
}

/** For a response the access log does not see: its bytes are taken when it ends, so they are charged to no other. */
export function markWhenEnded(req: IncomingMessage, res: ServerResponse): void {
  res.once("close", () => wireBytes(req, res));
}
