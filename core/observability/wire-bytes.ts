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

const ZERO: Counts = { read: 0, written: 0 };
/** The counters of each connection when its last response ended. */
const marks = new WeakMap<object, Counts>();
/** Each response's bytes, taken once: at its end, or when its access line asks first (whichever comes first). */
const taken = new WeakMap<ServerResponse, WireBytes>();

/** This response's bytes; the first call (once its last byte is written, or the client has gone) moves the mark. */
export function wireBytes(req: IncomingMessage, res: ServerResponse): WireBytes {
  let bytes = taken.get(res);
  if (bytes) return bytes;
  const socket = req.socket;
  const read = socket?.bytesRead ?? 0;
  const written = socket?.bytesWritten ?? 0;
  const before = (socket && marks.get(socket)) ?? ZERO;
  if (socket) marks.set(socket, { read, written });
  bytes = { bytesIn: Math.max(0, read - before.read), bytesOut: Math.max(0, written - before.written) };
  taken.set(res, bytes);
  return bytes;
}

/** For a response the access log does not see: its bytes are taken when it ends, so they are charged to no other. */
export function markWhenEnded(req: IncomingMessage, res: ServerResponse): void {
  res.once("close", () => wireBytes(req, res));
}
