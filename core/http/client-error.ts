// What a client gets when Node's HTTP parser refuses its request before any handler runs (malformed request
// line or chunked framing, header block too large, headers or body too slow): the spec's error envelope with an
// X-Request-Id when the socket can still take it, then the connection is closed. Never throws.
import type { Socket } from "node:net";
import { randomUUID } from "node:crypto";
import { GatewayError } from "../errors.ts";

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

export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  try {
    // A reset or a socket that already went: nothing to answer.
    if (err.code === "ECONNRESET" || !socket.writable || (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const e = errorFor(err.code);
    const body = JSON.stringify(e.toJSON());
    const requestId = `req_${randomUUID().replace(/-/g, "")}`;
    socket.end(
      `HTTP/1.1 ${e.status} ${e.status === 431 ? "Request Header Fields Too Large" : e.status === 408 ? "Request Timeout" : "Bad Request"}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
    );
    socket.once("error", () => {});
    setTimeout(() => socket.destroy(), 1000).unref();
  } catch {
    socket.destroy();
  }
}
