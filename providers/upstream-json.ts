// Small helpers the media drivers share: a JSON round trip, a byte download and a polling sleep, each mapping
// failures onto the gateway's error codes the same way the chat path does.
import { setTimeout as sleep } from "node:timers/promises";
import { GatewayError } from "../core/errors.ts";
import {
  MAX_ANSWER_BYTES, MAX_MEDIA_ANSWER_BYTES, failFromResponse, readUpstreamBody, readUpstreamJson,
  type UpstreamClient, type UpstreamRequest, type UpstreamResponse,
} from "./http.ts";

/** Most bytes of a downloaded media file (an image, a generated video: tens of MB at most). */
export const MAX_DOWNLOAD_BYTES = 1024 * 1024 * 1024;

/**
 * A success body as JSON, bounded (an answer by default; media ops pass MAX_MEDIA_ANSWER_BYTES); a body cut off or
 * not JSON is the transport's failure (retryable), as on the chat path.
 */
export function bodyJson(provider: string, res: UpstreamResponse, signal: AbortSignal, limit = MAX_ANSWER_BYTES): Promise<any> {
  return readUpstreamJson(provider, res, signal, limit);
}

/** A media op's JSON answer (or its error). */
export async function readJson(provider: string, res: UpstreamResponse, signal: AbortSignal): Promise<any> {
  if (res.status < 200 || res.status >= 300) throw await failFromResponse(provider, res);
  return bodyJson(provider, res, signal, MAX_MEDIA_ANSWER_BYTES);
}

export async function sendJson(client: UpstreamClient, provider: string, req: UpstreamRequest, signal: AbortSignal, timeoutMs?: number): Promise<{ json: any; headers: UpstreamResponse["headers"] }> {
  const res = await client.send(req, signal, timeoutMs);
  return { json: await readJson(provider, res, signal), headers: res.headers };
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Download bytes (generated media), following up to 5 redirects (file endpoints answer with a redirect to signed
 * storage URLs); credentials are only sent while the redirect stays on the original origin.
 */
export async function download(client: UpstreamClient, provider: string, url: string, headers: Record<string, string>, signal: AbortSignal, timeoutMs?: number): Promise<{ bytes: Uint8Array; contentType?: string }> {
  const origin = new URL(url).origin;
  let res = await client.send({ url, method: "GET", headers }, signal, timeoutMs);
  for (let hops = 0; REDIRECTS.has(res.status) && hops < 5; hops++) {
    const location = res.headers.location;
    const next = Array.isArray(location) ? location[0] : location;
    await res.body.dump().catch(() => {});
    if (!next) break;
    url = new URL(next, url).href;
    const sameOrigin = new URL(url).origin === origin;
    res = await client.send({ url, method: "GET", headers: sameOrigin ? headers : { accept: headers.accept ?? "*/*" } }, signal, timeoutMs);
  }
  if (res.status < 200 || res.status >= 300) throw await failFromResponse(provider, res);
  const buf = await readUpstreamBody(provider, res, MAX_DOWNLOAD_BYTES, signal);
  const bytes = new Uint8Array(buf); // its own copy: never a view into a read buffer the body shared
  const ct = res.headers["content-type"];
  return { bytes, contentType: (Array.isArray(ct) ? ct[0] : ct)?.split(";")[0]?.trim() };
}

/** Sleep between polls; an abort ends the wait at once (with the abort's reason). */
export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    throw new GatewayError(499 as number, "UPSTREAM_ERROR", "The job was cancelled", { cause: signal.reason });
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

export function decodeFloat32Base64(b64: string): Float32Array {
  const buf = Buffer.from(b64, "base64");
  const out = new Float32Array(buf.length >> 2);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}
