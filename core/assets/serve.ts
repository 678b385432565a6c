// GET /api/v1/assets/:name?expires=…&sig=… — serves a stored asset to whoever holds a valid signed link.
// No API key: the signature is the credential. Bad or missing signature -> 404 NOT_FOUND, expired link -> 410
// INVALID_REQUEST.
// Supports single byte ranges, which video players use to seek.
import { createReadStream } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Gateway } from "../gateway.ts";
import { GatewayError } from "../errors.ts";
import { assetsOf, ASSET_ROUTE } from "./index.ts";
import { verify } from "./sign.ts";

/**
 * Types a browser may show from the gateway's own origin (the console's and the admin API's): images and videos that
 * run nothing. The stored type comes from the upstream (an image's output_format, Imagen's mimeType): anything else,
 * an SVG with a script in it say, is sent as a download.
 */
const INERT = /^(?:image\/(?:png|jpeg|webp|gif)|video\/(?:mp4|webm|quicktime))$/;

function fail(res: ServerResponse, requestId: string, err: GatewayError): void {
  res.writeHead(err.status, { "content-type": "application/json", "x-request-id": requestId, "cache-control": "no-store" });
  res.end(JSON.stringify(err.toJSON()));
}

/**
 * The spec's error table has no code for a 410: INVALID_REQUEST (the request can no longer be served as made, the
 * code an image replay whose asset is gone gets too), with details.reason telling it from the others. NOT_FOUND stays
 * the 404 of a link that was never valid.
 */
function linkExpired(expires: number): GatewayError {
  return new GatewayError(410, "INVALID_REQUEST",
    "This asset link has expired; repeat the request with the same idempotency key for a fresh link (an image asked for without a key is kept only while its link lives)",
    { details: { reason: "link_expired", expired_at: expires } });
}

export async function serveAsset(gateway: Gateway, req: IncomingMessage, res: ServerResponse, name: string, requestId: string): Promise<void> {
  const url = new URL(req.url ?? "/", "http://x");
  const assets = assetsOf(gateway);
  const verdict = verify(assets.secret(), `${ASSET_ROUTE}/${name}`, url.searchParams.get("expires"), url.searchParams.get("sig"));
  if (verdict === "invalid") return fail(res, requestId, new GatewayError(404, "NOT_FOUND", "No such asset (the link is invalid)"));
  if (verdict === "expired") return fail(res, requestId, linkExpired(Number(url.searchParams.get("expires"))));
  const meta = await assets.store.meta(name);
  if (!meta) return fail(res, requestId, new GatewayError(404, "NOT_FOUND", "No such asset (it is no longer kept)"));

  const expires = Number(url.searchParams.get("expires"));
  const inert = INERT.test(meta.contentType);
  const headers: Record<string, string> = {
    "content-type": inert ? meta.contentType : "application/octet-stream",
    ...(inert ? {} : { "content-disposition": "attachment" }),
    // Even an image is not sniffed into something else, and nothing in it runs or loads anything.
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
    "accept-ranges": "bytes",
    "cache-control": `private, max-age=${Math.max(0, Math.floor(expires - Date.now() / 1000))}`,
    "x-request-id": requestId,
  };
  let start = 0;
  let end = meta.size - 1;
  let status = 200;
  const range = /^bytes=(\d*)-(\d*)$/.exec(String(req.headers.range ?? ""));
  if (range && (range[1] || range[2])) {
    if (range[1]) {
      start = Number(range[1]);
      if (range[2]) end = Math.min(end, Number(range[2]));
    } else {
      start = Math.max(0, meta.size - Number(range[2]));
    }
    if (start > end || start >= meta.size) {
      res.writeHead(416, { ...headers, "content-range": `bytes */${meta.size}` });
      res.end();
      return;
    }
    status = 206;
    headers["content-range"] = `bytes ${start}-${end}/${meta.size}`;
  }
  headers["content-length"] = String(end - start + 1);
  res.writeHead(status, headers);
  if (req.method === "HEAD" || meta.size === 0) {
    res.end();
    return;
  }
  await new Promise<void>((done) => {
    const file = createReadStream(assets.store.path(name), { start, end });
    file.on("error", () => { res.destroy(); done(); });
    res.on("close", () => { file.destroy(); done(); });
    file.pipe(res);
  });
}
