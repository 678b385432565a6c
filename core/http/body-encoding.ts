// Content-Encoding on a JSON request body (RFC 9110 §8.4; some clients compress large requests). gzip, deflate and
// br are decoded as the body arrives, the decoded bytes bounded by server.max_body_bytes like a plain body's, so a
// small body that inflates past it (a decompression bomb) is refused 413 as soon as it does and the decoder stopped;
// the bytes as sent are bounded by it too (body.ts).
// Any other coding, or more than one, is 415 naming it; none (or identity) is the body as sent. Before, the header
// was ignored: gzip was "not valid JSON", br "not valid UTF-8", and a plain body labelled gzip was accepted.
import type { IncomingMessage } from "node:http";
import type { Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { GatewayError } from "../errors.ts";

const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  "x-gzip": createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

const SUPPORTED = Object.keys(DECODERS).filter((c) => c !== "x-gzip");

/**
 * The decoder for the request's Content-Encoding, undefined for none; a 415 for a coding the gateway cannot decode,
 * with the Accept-Encoding that says which it can (RFC 9110 §15.5.16), for a client that picks its coding from it.
 */
export function bodyDecoder(req: IncomingMessage): Transform | undefined {
  const header = req.headers["content-encoding"];
  if (header === undefined) return undefined;
  const codings = header.split(",").map((c) => c.trim().toLowerCase()).filter((c) => c && c !== "identity");
  if (!codings.length) return undefined;
  const make = codings.length === 1 ? DECODERS[codings[0]!] : undefined;
  if (make) return make();
  throw new GatewayError(415, "UNSUPPORTED_MEDIA_TYPE", `Content-Encoding ${JSON.stringify(header.slice(0, 100))} is not supported: send the body as is, or with one of ${SUPPORTED.join(", ")}`, {
    details: { field: "content-encoding", supported: SUPPORTED },
    headers: { connection: "close", "accept-encoding": SUPPORTED.join(", ") },
  });
}

/** A body that does not decode as its coding says. */
export function undecodable(req: IncomingMessage, badCode: "INVALID_REQUEST" | "BAD_REQUEST"): GatewayError {
  return new GatewayError(400, badCode, `Request body is not valid ${String(req.headers["content-encoding"]).trim()}`, {
    details: { field: "content-encoding" },
    headers: { connection: "close" },
  });
}
