// Small helpers the media drivers share: a JSON round trip, a byte download (off the provider's origin only
// through the client-URL guard) and a polling sleep, each mapping failures onto the gateway's error codes the same
// way the chat path does.
import { setTimeout as sleep } from "node:timers/promises";
import { GatewayError } from "../core/errors.ts";
import { DEFAULT_URL_FETCH, fetchClientUrl, type UrlFetchOptions } from "../core/net/url-fetch.ts";
import { answerTooLarge, failFromResponse, readUpstreamBody, readUpstreamJson, type UpstreamClient, type UpstreamRequest, type UpstreamResponse } from "./http.ts";
import { decodeBase64Strict } from "./strict-base64.ts";

export { MAX_DOWNLOAD_BYTES } from "./upstream-limits.ts";

/**
 * A success body as JSON, bounded (an answer by default; media ops pass "media": server.upstream_limits); a body cut
 * off or not JSON is the transport's failure (retryable), as on the chat path.
 */
export function bodyJson(provider: string, res: UpstreamResponse, signal: AbortSignal, kind: "answer" | "media" = "answer"): Promise<any> {
  return readUpstreamJson(provider, res, signal, kind);
}

/** A media op's JSON answer (or its error). */
export async function readJson(provider: string, res: UpstreamResponse, signal: AbortSignal): Promise<any> {
  if (res.status < 200 || res.status >= 300) throw await failFromResponse(provider, res);
  return bodyJson(provider, res, signal, "media");
}

export async function sendJson(client: UpstreamClient, provider: string, req: UpstreamRequest, signal: AbortSignal, timeoutMs?: number): Promise<{ json: any; headers: UpstreamResponse["headers"] }> {
  const res = await client.send(req, signal, timeoutMs);
  return { json: await readJson(provider, res, signal), headers: res.headers };
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Redirects a download may take in all (file endpoints answer with a redirect to signed storage URLs). */
const MAX_REDIRECTS = 5;
/** Whole-download deadline off the provider's origin, when the caller gives none (a video job has its own). */
export const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;

export interface DownloadOptions {
  /**
   * scheme://host:port the operation's request went to: the provider's configured base_url, or a BYOK project's own
   * base_url for its own requests. Only URLs on it are fetched directly (with `headers`).
   */
  origin: string;
  /** Sent only to `origin` (credentials); a guarded download gets just `accept`. */
  headers?: Record<string, string>;
  /** server.url_fetch (allow_hosts; the test hooks): the guard for every URL off the origin. */
  urlFetch?: UrlFetchOptions;
  signal: AbortSignal;
  timeoutMs?: number;
}

/**
 * Download bytes (generated media) from a URL an upstream handed back. On the provider's own origin it is fetched
 * through the provider's client, and redirects that stay there are followed with the same headers. Any other URL,
 * and any redirect off that origin, goes through the client-URL guard (core/net/url-fetch.ts): https only, public
 * addresses only (checked after DNS, the connection pinned to the checked address), every further redirect checked
 * again, server.url_fetch.allow_hosts honoured, no credentials. An upstream (a BYOK base_url included) so cannot have
 * the gateway read loopback, metadata or other internal services and hand the bytes back; a refusal is a 502
 * UPSTREAM_ERROR naming why, without internal bodies or connection errors.
 */
export async function download(client: UpstreamClient, provider: string, raw: string, o: DownloadOptions): Promise<{ bytes: Uint8Array; contentType?: string }> {
  const origin = new URL(o.origin).origin;
  const headers = o.headers ?? {};
  let url = parseUrl(raw);
  if (!url) throw downloadError(provider, "invalid_url", `Provider ${provider} returned a download URL that is not a valid URL`);
  if (url.origin !== origin) return guarded(provider, url, o, false, MAX_REDIRECTS, client.limits.download);
  let res = await client.send({ url: url.href, method: "GET", headers }, o.signal, o.timeoutMs);
  for (let hops = 0; REDIRECTS.has(res.status); hops++) {
    const location = res.headers.location;
    const next = parseUrl(Array.isArray(location) ? location[0] : location, url);
    await res.body.dump().catch(() => {});
    if (!next) throw downloadError(provider, "bad_redirect", `Provider ${provider}'s download answered ${res.status} without a usable Location`);
    if (hops >= MAX_REDIRECTS) throw downloadError(provider, "too_many_redirects", `Provider ${provider}'s download redirects more than ${MAX_REDIRECTS} times`);
    if (next.origin !== origin) return guarded(provider, next, o, true, MAX_REDIRECTS - hops - 1, client.limits.download);
    url = next;
    res = await client.send({ url: url.href, method: "GET", headers }, o.signal, o.timeoutMs);
  }
  if (res.status < 200 || res.status >= 300) throw await failFromResponse(provider, res);
  const buf = await readUpstreamBody(provider, res, "download", o.signal);
  const bytes = new Uint8Array(buf); // its own copy: never a view into a read buffer the body shared
  const ct = res.headers["content-type"];
  return { bytes, contentType: (Array.isArray(ct) ? ct[0] : ct)?.split(";")[0]?.trim() };
}

function parseUrl(raw: string | undefined, base?: URL): URL | undefined {
  if (!raw) return undefined;
  try {
    return new URL(raw, base);
  } catch {
    return undefined;
  }
}

/** A URL off the provider's origin: through the client-URL guard, its refusals turned into upstream errors. */
async function guarded(
  provider: string, url: URL, o: DownloadOptions, redirected: boolean, redirectsLeft: number, maxBytes: number,
): Promise<{ bytes: Uint8Array; contentType?: string }> {
  const policy: UrlFetchOptions = {
    ...(o.urlFetch ?? DEFAULT_URL_FETCH),
    // The bounds of generated media (server.upstream_limits.download_bytes), not of a client's seed image
    // (server.url_fetch.max_bytes / timeout_ms).
    maxBytes,
    timeoutMs: o.timeoutMs ?? DOWNLOAD_TIMEOUT_MS,
    maxRedirects: redirectsLeft,
  };
  // The guard's messages start with the field: "Provider p's download URL points at a loopback address 127.0.0.1; …".
  const field = redirected ? `Provider ${provider}'s download (redirected to ${url.protocol}//${url.host})` : `Provider ${provider}'s download URL`;
  try {
    const { bytes, contentType } = await fetchClientUrl(url.href, policy, { field, signal: o.signal, accept: o.headers?.accept ?? "*/*" });
    return { bytes, contentType };
  } catch (err) {
    if (!(err instanceof GatewayError) || err.status !== 400) throw err; // a cancel (499) stays what it is
    const d = (err.details ?? {}) as { reason?: string; address?: string; status?: number };
    const reason = d.reason ?? "refused";
    if (reason === "too_large") throw answerTooLarge(provider, "download", maxBytes); // as on the provider's own origin
    // A connection failure's text (refused, reset, TLS) is not echoed: it would say what listens where.
    const message = reason === "unreachable" ? `${field} could not be downloaded` : err.message;
    const transient = reason === "unreachable" || reason === "timeout" || (reason === "http_status" && (d.status ?? 0) >= 500);
    throw new GatewayError(reason === "timeout" ? 504 : 502, reason === "timeout" ? "UPSTREAM_TIMEOUT" : "UPSTREAM_ERROR", message, {
      retryable: transient,
      details: { provider, reason, ...(d.address ? { address: d.address } : {}), ...(d.status ? { status: d.status } : {}) },
    });
  }
}

function downloadError(provider: string, reason: string, message: string): GatewayError {
  return new GatewayError(502, "UPSTREAM_ERROR", message, { retryable: false, details: { provider, reason } });
}

/** Sleep between polls; an abort ends the wait at once (with the abort's reason). */
export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    throw new GatewayError(499 as number, "CANCELLED", "The job was cancelled", { cause: signal.reason });
  }
}

/** A poll that failed transiently (5xx, network) is retried a few times before the job is given up. */
export async function pollWithRetry<T>(fn: () => Promise<T>, signal: AbortSignal, tries = 5, waitMs = 1000): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (!(e instanceof GatewayError) || !e.retryable || signal.aborted || i >= tries - 1) throw e;
      await pause(Math.min(waitMs * 2 ** i, 10_000), signal);
    }
  }
}

/** The content type of image bytes by their magic number. */
export function sniffImage(bytes: Uint8Array, fallback = "image/png"): string {
  if (bytes[0] === 0x89 && bytes[1] === 0x50) return "image/png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return "image/jpeg";
  if (bytes[0] === 0x52 && bytes[1] === 0x49 && bytes[8] === 0x57) return "image/webp";
  if (bytes[0] === 0x47 && bytes[1] === 0x49) return "image/gif";
  return fallback;
}

/** The wire's base64 embedding (little-endian float32s); undefined when it is not one. */
export function decodeFloat32Base64(b64: string): Float32Array | undefined {
  const buf = decodeBase64Strict(b64);
  if (!buf || buf.length % 4 !== 0) return undefined; // not base64, or not whole float32s
  const out = new Float32Array(buf.length >> 2);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}
