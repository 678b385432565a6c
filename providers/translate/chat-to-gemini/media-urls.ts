// A client's media URL for Gemini (reference §4.3): Gemini fetches only its own URIs (Files API files, YouTube;
// gs:// on Vertex) and refuses any other fileData URI, so the gateway downloads such a URL itself — through the
// client-URL guard (core/net/url-fetch.ts: https only, public addresses only, server.url_fetch's size and time
// bounds) — and sends the bytes as inlineData. A download that fails is a 400 naming the client's field.
import { fetchClientUrl, type UrlFetchOptions } from "../../../core/net/url-fetch.ts";
import { sniffImage } from "../../upstream-json.ts";

/** A part sent as fileData for now, to become inlineData once its URL is downloaded. */
export interface PendingUrl {
  part: Record<string, unknown>;
  url: string;
  /** The client's field, for a refusal. */
  field: string;
}

const GEMINI_OWN = /^(gs:\/\/|https:\/\/generativelanguage\.googleapis\.com\/|https:\/\/(www\.|m\.)?(youtube\.com|youtu\.be)\/)/i;

/** A URI Gemini reads itself: sent as fileData, not downloaded. */
export const geminiFetches = (url: string) => GEMINI_OWN.test(url);

const GENERIC = new Set(["application/octet-stream", "binary/octet-stream", "application/binary"]);

/** Downloads every pending URL (at once) and turns its part into inlineData. */
export async function inlineUrls(pending: readonly PendingUrl[], policy: UrlFetchOptions, signal: AbortSignal): Promise<void> {
  await Promise.all(pending.map(async ({ part, url, field }) => {
    const { bytes, contentType } = await fetchClientUrl(url, policy, { field, signal });
    const declared = (part.fileData as { mimeType?: string } | undefined)?.mimeType;
    // The server's type, unless it says nothing useful: then the bytes' (images) or the URL's extension.
    const mimeType = contentType && !GENERIC.has(contentType.toLowerCase()) ? contentType : sniffImage(bytes, declared ?? "image/jpeg");
    delete part.fileData;
    part.inlineData = { mimeType, data: Buffer.from(bytes).toString("base64") };
  }));
}
