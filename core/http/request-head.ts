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
  // RFC 9112 §3.2: a request with more than one Host line is refused. Node keeps the first and drops the rest, so
  // which authority it names would depend on who reads the head (a proxy in front may have taken the last).
  const hosts = hostLines(req);
  if (hosts > 1) {
    return new GatewayError(400, "INVALID_REQUEST", `The Host header appears ${hosts} times; a request carries exactly one`, {
      details: { field: "host", host_lines: hosts },
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

/** How many header lines name Host: `req.headers` shows one whatever was sent, `rawHeaders` keeps every line. */
function hostLines(req: IncomingMessage): number {
  let n = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === "host") n++;
  return n;
}
