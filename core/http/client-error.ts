// What a client gets when Node's HTTP parser refuses its request before any handler runs (malformed request
// line or chunked framing, header block too large, headers or body too slow): the error envelope of the path's API
// (core/http/path-envelope.ts) with an X-Request-Id when the socket can still take it, then the connection is closed.
// Never throws.
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { requestId as newRequestId } from "./ids.ts";
import { GatewayError } from "../errors.ts";
import { envelopeForPath } from "./path-envelope.ts";

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
        // What followed is no request of that path: the spec's envelope.
        if (inFlight.writableFinished) answer(err, socket, undefined);
        else socket.destroy();
      };
      inFlight.once("finish", after);
      inFlight.once("close", after);
      return;
    }
    answer(err, socket, pathOf(err, inFlight));
  } catch {
    socket.destroy();
  }
}

/** A request line (`POST /api/v1/messages?x HTTP/1.1`): its path. */
const REQUEST_LINE = /^(?:\r?\n)*[!#$%&'*+.^_`|~0-9A-Za-z-]+ (\/[^ ?#\r\n]*)[^ \r\n]* HTTP\/\d\.\d\r?\n/;

/**
 * The path of the request refused, as far as it is known: the request in flight (its body too slow or malformed), or
 * the request line the parser's last read began with (a header block too large that arrived in one read). A header
 * block that arrived over several reads, or too slowly, leaves no trace of its path (Node's parser keeps it).
 */
function pathOf(err: NodeJS.ErrnoException & { rawPacket?: unknown }, inFlight: ServerResponse | undefined): string | undefined {
  const url = inFlight?.req?.url;
  if (url !== undefined) return url.split("?")[0];
  if (!Buffer.isBuffer(err.rawPacket)) return undefined;
  return REQUEST_LINE.exec(err.rawPacket.subarray(0, 16_384).toString("latin1"))?.[1];
}

function answer(err: NodeJS.ErrnoException, socket: Socket, path: string | undefined): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const e = errorFor(err.code);
  const envelope = envelopeForPath(path, e);
  const body = JSON.stringify(envelope.body);
  const requestId = newRequestId();
  socket.end(
    `HTTP/1.1 ${e.status} ${reasonOf(e.status)}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\n` +
      `${envelope.anthropic ? `request-id: ${requestId}\r\n` : ""}connection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), 1000).unref();
}
