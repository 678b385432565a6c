// Checks on a request's head that Node's parser leaves to us, made before any route runs. Node's own answers to
// these were a bare 400 with an empty body (Host missing: requireHostHeader) or no answer at all (header lines past
// maxHeadersCount were silently dropped, so a later refusal blamed a header the client had sent); core/server.ts
// turns both off and answers here, in the path's envelope, with an X-Request-Id and an access line.
import type { IncomingMessage } from "node:http";
import { GatewayError } from "../errors.ts";

/**
 * Header lines a request may have. Node's default bound, where it used to drop the rest; far above any real client
 * (a browser sends ~20), and `server.max_header_bytes` bounds the block's bytes anyway.
 */
export const MAX_HEADER_LINES = 2000;

/** Why the head is refused, or undefined. The connection closes after the answer: what follows is not trusted. */
export function requestHeadProblem(req: IncomingMessage): GatewayError | undefined {
  const lines = req.rawHeaders.length / 2;
  if (lines > MAX_HEADER_LINES) {
    return new GatewayError(431, "INVALID_REQUEST", `Request has ${lines} header lines; at most ${MAX_HEADER_LINES} are accepted`, {
      details: { header_lines: lines, max_header_lines: MAX_HEADER_LINES },
      headers: { connection: "close" },
    });
  }
  // RFC 9112 §3.2: every HTTP/1.1 request carries Host (an HTTP/1.0 one need not: old health checkers).
  if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
    return new GatewayError(400, "INVALID_REQUEST", "The Host header is required on an HTTP/1.1 request", {
      details: { field: "host" },
      headers: { connection: "close" },
    });
  }
  return undefined;
}
