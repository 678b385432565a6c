// A client's media URL for Gemini (reference §4.3): Gemini fetches only its own URIs (Files API files, YouTube;
// gs:// on Vertex) and refuses any other fileData URI, so the gateway downloads such a URL itself — through the
// client-URL guard (core/net/url-fetch.ts: https only, public addresses only, server.url_fetch's size and time
// bounds) and the media-type check (providers/client-media.ts: an HTML page is not an image) — and sends the bytes
// as inlineData. A download that fails is a 400 naming the client's field.
// Bounded per request, since each URL costs a connection and up to url_fetch.max_bytes of memory: at most MAX_URLS
// URLs, MAX_TOTAL_BYTES downloaded in all (counted as the bytes arrive, over the downloads running side by side, so
// the one that passes it stops them all), CONCURRENCY at a time; the first failure cancels the others. Across
// requests, the bytes requests hold (from their first chunk until the request ends) are bounded by
// server.url_fetch.max_bytes_in_flight, half of it per project (core/net/download-pool.ts): past it a download is a
// 429 to retry shortly, not more memory. What one attempt downloaded is kept for the request's retries and
// fallbacks (keyed by the request's signal, which every attempt of one client request shares, and let go when the
// request ends), so a URL is fetched, and charged to the pool, once per client request: a fallback to another
// upstream kind reuses the bytes too, checked against the types that kind takes. Claude on Bedrock and Vertex
// fetches no URLs either, nor does Bedrock Converse: their image and document URLs are inlined here too
// (claude-url-sources.ts, chat-to-converse/url-media.ts).
import { invalidRequest } from "../../../core/errors.ts";
import type { UrlFetchOptions } from "../../../core/net/url-fetch.ts";
import { allowedMediaType, fetchClientMedia } from "../../client-media.ts";
import { requestBudget } from "./download-budget.ts";
import { requestOf } from "../../../core/net/request-abort.ts";

/** A part sent as fileData for now, to become inlineData once its URL is downloaded. */
export interface PendingUrl {
  part: Record<string, unknown>;
  url: string;
  /** The client's field, for a refusal. */
  field: string;
  /** How the bytes replace the URL in `part`; by default Gemini's inlineData in place of fileData. */
  inline?(mimeType: string, data: string): void;
}

/** Whose upstream the bytes are for, and the media types it takes from a URL (defaults: Gemini's). */
export interface InlineFor {
  upstream: string;
  types: readonly string[];
  what: string;
}

/** Most URLs one request may have downloaded (data: URLs and Gemini's own URIs do not count). */
export const MAX_URLS = 50;
/** Most bytes the downloads of one request may add up to (Gemini refuses requests over 20 MB of inline data). */
export const MAX_TOTAL_BYTES = 20 * 1024 * 1024;
/** Downloads in flight at once for one request. */
export const CONCURRENCY = 4;
/** What inlineData may hold from a client URL: an image, or a file part's PDF / audio / video (mimeFromUrl). */
const GEMINI: InlineFor = { upstream: "Gemini", types: ["image/*", "application/pdf", "audio/*", "video/*"], what: "an image or a PDF, audio or video file" };

const GEMINI_OWN = /^(gs:\/\/|https:\/\/generativelanguage\.googleapis\.com\/|https:\/\/(www\.|m\.)?(youtube\.com|youtu\.be)\/)/i;

/** A URI Gemini reads itself: sent as fileData, not downloaded. */
export const geminiFetches = (url: string) => GEMINI_OWN.test(url);

interface Inline { mimeType: string; data: string; size: number }
/** Per client request (its signal): URL -> its download, whichever upstream kind asked for it first. */
const kept = new WeakMap<AbortSignal, Map<string, Promise<Inline>>>();

/** Downloads every pending URL (CONCURRENCY at a time, each once per request) and turns its part into inlineData. */
export async function inlineUrls(pending: readonly PendingUrl[], policy: UrlFetchOptions, signal: AbortSignal, forWhom: InlineFor = GEMINI): Promise<void> {
  const urls = [...new Set(pending.map((p) => p.url))];
  if (urls.length > MAX_URLS) {
    const over = pending.find((p) => p.url === urls[MAX_URLS])!;
    throw invalidRequest(`${over.field}: at most ${MAX_URLS} media URLs per request can be downloaded for ${forWhom.upstream} (send more as data: URLs${forWhom === GEMINI ? " or Files API URIs" : ""})`, over.field, { reason: "too_many_urls", max_urls: MAX_URLS });
  }
  let cache = kept.get(signal);
  if (!cache) {
    kept.set(signal, (cache = new Map()));
    requestOf(signal)?.onEnd(() => kept.delete(signal)); // the bytes go with the request, as the pool's share does
  }
  // One failure stops the downloads still running (and the client going away stops them all).
  const stop = new AbortController();
  const linked = AbortSignal.any([signal, stop.signal]);
  const budget = requestBudget(MAX_TOTAL_BYTES, policy, forWhom.upstream, signal);
  const got = new Map<string, Inline>();
  const queue = pending.filter((p, i) => pending.findIndex((q) => q.url === p.url) === i);
  const worker = async () => {
    for (let p = queue.shift(); p; p = queue.shift()) {
      let job = cache!.get(p.url);
      if (!job) {
        const { url, field } = p;
        job = fetchClientMedia(url, policy, { field, signal: linked, types: forWhom.types, what: forWhom.what, charge: budget.charge(field) })
          .then(({ bytes, mimeType }) => ({ mimeType, data: Buffer.from(bytes).toString("base64"), size: bytes.length }));
        // A failed download is not kept: a later attempt may try again (the request fails on it anyway).
        job.catch(() => cache!.delete(url));
        cache!.set(url, job);
      }
      const done = await job;
      // Downloaded for another kind, it may be a type this one does not take (Gemini's audio for Claude).
      allowedMediaType({ field: p.field, types: forWhom.types, what: forWhom.what }, done.mimeType, done.mimeType);
      got.set(p.url, done);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, () => worker().catch((e) => {
      queue.length = 0;
      stop.abort();
      throw e;
    })));
  } catch (e) {
    stop.abort();
    budget.close(false); // nothing of it goes on: given back now
    throw e;
  }
  budget.close(true); // the request sends and keeps these bytes: held until it ends
  for (const { part, url, inline } of pending) {
    const { mimeType, data } = got.get(url)!;
    if (inline) inline(mimeType, data);
    else {
      delete part.fileData;
      part.inlineData = { mimeType, data };
    }
  }
}
