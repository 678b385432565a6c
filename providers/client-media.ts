// A client's media URL downloaded for an upstream that takes bytes, not URLs (Gemini's inlineData, Veo's seed
// image), shared by the drivers and the translators: fetched through the client-URL guard (core/net/url-fetch.ts)
// and kept only if it is a type the client's field allows. The server's type decides; a generic one
// (octet-stream) or none is replaced by what the bytes are (image magic numbers, %PDF-); anything else — an HTML
// page, a JSON error body served with 200 — is a 400 naming the field rather than bytes the upstream misreads.
import { GatewayError, type ErrorCode } from "../core/errors.ts";
import { fetchClientUrl, type FetchTarget, type UrlFetchOptions } from "../core/net/url-fetch.ts";
import { sniffImage } from "./upstream-json.ts";

export interface MediaRequest {
  /** The client's field, as named in a refusal. */
  field: string;
  /** Media types the field allows: exact (`application/pdf`) or a family (`image/*`). */
  types: readonly string[];
  /** What those types are, for the refusal: "an image". */
  what: string;
  signal?: AbortSignal;
  code?: ErrorCode;
  /** Counts the bytes against a wider bound as they arrive (a request's total, the process's downloads in flight). */
  charge?: FetchTarget["charge"];
}

export interface ClientMedia {
  bytes: Uint8Array;
  /** Bare, lower case. */
  mimeType: string;
}

export const IMAGE_TYPES: readonly string[] = ["image/*"];

const GENERIC = new Set(["application/octet-stream", "binary/octet-stream", "application/binary", "application/unknown"]);

const allows = (types: readonly string[], t: string) => types.some((a) => (a.endsWith("/*") ? t.startsWith(a.slice(0, -1)) : t === a));

/** The type of the bytes by their magic number, for the kinds a client's media URL usually holds. */
function sniff(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0x25 && bytes[1] === 0x50 && bytes[2] === 0x44 && bytes[3] === 0x46 && bytes[4] === 0x2d) return "application/pdf";
  return sniffImage(bytes, "") || undefined;
}

export async function fetchClientMedia(url: string, policy: UrlFetchOptions, m: MediaRequest): Promise<ClientMedia> {
  const { bytes, contentType } = await fetchClientUrl(url, policy, { field: m.field, signal: m.signal, code: m.code, accept: m.types.join(", "), charge: m.charge });
  const mimeType = contentType && !GENERIC.has(contentType) ? contentType : sniff(bytes);
  return { bytes, mimeType: allowedMediaType(m, mimeType, contentType) };
}

/**
 * `mimeType` when the field allows it, else the 400 naming the field (`served`: the server's own type, for the
 * message). Also for bytes one request already downloaded for another upstream, which takes other types.
 */
export function allowedMediaType(m: Pick<MediaRequest, "field" | "types" | "what" | "code">, mimeType: string | undefined, served: string | undefined): string {
  if (mimeType && allows(m.types, mimeType)) return mimeType;
  throw new GatewayError(400, m.code ?? "INVALID_REQUEST", `${m.field} is not ${m.what} (the URL served ${served ?? "no content type"})`, {
    retryable: false, details: { field: m.field, reason: "unsupported_media_type", ...(served ? { content_type: served } : {}) },
  });
}
