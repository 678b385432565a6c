// What a client gets when Node's HTTP parser refuses its request before any handler runs (malformed request
// line or chunked framing, header block too large, headers or body too slow): the spec's error envelope with an
// X-Request-Id when the socket can still take it, then the connection is closed. Never throws.
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { requestId as newRequestId } from "./ids.ts";
import { GatewayError } from "../errors.ts";

const ANSWERED = Symbol("client-error-answered");

function errorFor(code: string | undefined): GatewayError {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return new GatewayError(431, "INVALID_REQUEST", "Request header fields too large");
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new GatewayError(408, "INVALID_REQUEST", "The request was not received in time");
    default:
      return new GatewayError(400, "INVALID_REQUEST", `Malformed HTTP request${code ? ` (${code})` : ""}`);
  }
}

function reasonOf(status: number): string {
  return status === 431 ? "Request Header Fields Too Large" : status === 408 ? "Request Timeout" : "Bad Request";
}

export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  try {
    // The parser may report again on later data; one answer per connection.
    const marked = socket as Socket & { [ANSWERED]?: boolean };
    if (marked[ANSWERED]) return;
    marked[ANSWERED] = true;
    socket.on("error", () => {});
    const inFlight = (socket as { _httpMessage?: ServerResponse })._httpMessage;
    // A reset or a socket that already went: nothing to answer.
    if (err.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    // Bytes after a whole request (a body longer than its Content-Length, garbage after a pipelined request):
    // the request in flight was received intact and gets its own answer first; the 400 is for what followed.
    if (inFlight && inFlight.req?.complete && err.code !== "ERR_HTTP_REQUEST_TIMEOUT") {
      let sent = false;
      const after = () => {
        if (sent) return;
        sent = true;
        if (inFlight.writableFinished) answer(err, socket);
        else socket.destroy();
      };
      inFlight.once("finish", after);
      inFlight.once("close", after);
      return;
    }
    answer(err, socket);
  } catch {
    socket.destroy();
  }
}

function answer(err: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const e = errorFor(err.code);
  const body = JSON.stringify(e.toJSON());
  const requestId = newRequestId();
  socket.end(
    `HTTP/1.1 ${e.status} ${reasonOf(e.status)}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), 1000).unref();
}
