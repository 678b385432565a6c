// An upstream answer sent with a Content-Encoding, decoded (undici's request() hands the bytes over as they came).
// The gateway asks for `identity` (providers/http.ts), but a host or a proxy in front of it may compress anyway, and
// a configured Accept-Encoding may ask for it: JSON, SSE and Bedrock's event stream are all read decoded here, so
// every reader (and every bound on what it reads) sees the answer's own bytes.
import type { Transform } from "node:stream";
import { arrayBuffer, blob, buffer, json, text } from "node:stream/consumers";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { Dispatcher } from "undici";
import { GatewayError } from "../core/errors.ts";

export type UpstreamBody = Dispatcher.ResponseData["body"];

const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  "x-gzip": createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * `body` decoded by the `contentEncoding` it came with; `body` itself when there is nothing to decode (none, or
 * `identity`). A coding the gateway cannot decode is a retryable 502 (the body is let go); a body that does not
 * decode fails its reader with one.
 */
export function decodeBody(provider: string, body: UpstreamBody, contentEncoding: string | undefined): UpstreamBody {
  if (!contentEncoding) return body;
  const coding = contentEncoding.trim().toLowerCase();
  if (coding === "identity" || coding === "") return body;
  const make = DECODERS[coding];
  if (!make) {
    body.on("error", ignore);
    body.destroy();
    throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} answered with Content-Encoding ${contentEncoding}, which the gateway cannot decode`, {
      retryable: true, details: { provider, reason: "content_encoding", content_encoding: contentEncoding },
    });
  }
  return decoded(provider, body, make(), coding);
}

function decoded(provider: string, raw: UpstreamBody, dec: Transform, coding: string): UpstreamBody {
  // The upstream's own failures (a reset, the upstream timeout) reach the reader as they are; the decoder's
  // (zlib's "incorrect header check", a cut body) become an error that says what went wrong.
  let upstreamError: unknown;
  raw.on("error", (err) => {
    upstreamError = err;
    dec.destroy(err);
  });
  const destroy = dec._destroy;
  dec._destroy = function (err, cb) {
    const mine = err && err !== upstreamError && !(err instanceof GatewayError);
    destroy.call(this, mine ? decodeError(provider, coding, err) : err, cb);
  };
  // The reader let go (or failed): the upstream's body goes too, so the connection is not left half read.
  dec.on("close", () => {
    if (!raw.destroyed && !raw.readableEnded) raw.destroy();
  });
  raw.pipe(dec);
  return Object.assign(dec, {
    text: () => text(dec),
    json: () => json(dec),
    arrayBuffer: () => arrayBuffer(dec),
    blob: () => blob(dec),
    bytes: async () => new Uint8Array(await buffer(dec)),
    formData: () => Promise.reject(new Error("formData() is not supported")),
    // Dropping it unread drops the connection: compressed answers are not the usual case.
    dump: () => new Promise<void>((resolve) => {
      if (dec.destroyed) return resolve();
      dec.once("close", () => resolve());
      dec.destroy();
    }),
  }) as unknown as UpstreamBody;
}

function decodeError(provider: string, coding: string, err: Error): GatewayError {
  return new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} sent a ${coding} answer that does not decode: ${err.message}`, {
    retryable: true, details: { provider, reason: "content_encoding", content_encoding: coding }, cause: err,
  });
}

function ignore(): void {}
