// The fake Bedrock's SigV4 check: an implementation of AWS's algorithm independent of the gateway's
// (@smithy/signature-v4), from the documented steps (reference protocols-2 §2.7), recomputed for every request from the
// bytes that arrived: the wire path (each segment URI-encoded again, non-S3 rule), the signed headers as received, the
// body's SHA-256. A tampered body, another region or a path encoded differently from the one signed all fail.
import { createHash, createHmac } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

export interface AwsCreds { accessKeyId: string; secretAccessKey: string; sessionToken?: string }

export type SigCheck = { ok: true } | { ok: false; type: string; message: string };

const sha256 = (b: string | Buffer) => createHash("sha256").update(b).digest("hex");
const hmac = (k: string | Buffer, s: string) => createHmac("sha256", k).update(s, "utf8").digest();

/** RFC 3986 encoding, as AWS's uriEscape (encodeURIComponent leaves !'()* alone). */
export const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());

/** Canonical URI of a non-S3 request: each segment of the path as sent, encoded once more. */
export function canonicalUri(wirePath: string): string {
  return wirePath.split("/").map(rfc3986).join("/") || "/";
}

function canonicalQuery(search: string): string {
  if (!search) return "";
  const pairs = search.split("&").filter(Boolean).map((p) => {
    const [k, v = ""] = p.split("=");
    return [rfc3986(decodeURIComponent(k!)), rfc3986(decodeURIComponent(v))] as const;
  });
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : 1));
  return pairs.map(([k, v]) => `${k}=${v}`).join("&");
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(",") : v);

export function signatureFor(method: string, url: string, headers: IncomingHttpHeaders, signed: readonly string[], body: Buffer, secret: string, scope: string, amzDate: string): string {
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  const canonical = [
    method,
    canonicalUri(path),
    canonicalQuery(q === -1 ? "" : url.slice(q + 1)),
    signed.map((h) => `${h}:${(one(headers[h]) ?? "").trim().replace(/\s+/g, " ")}\n`).join(""),
    signed.join(";"),
    sha256(body),
  ].join("\n");
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonical)].join("\n");
  const [date, region, service] = scope.split("/");
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date!), region!), service!), "aws4_request");
  return createHmac("sha256", key).update(stringToSign, "utf8").digest("hex");
}

const MISMATCH = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.";

/** What the real service answers, by the same exception names (403 each). */
export function verifySigV4(method: string, url: string, headers: IncomingHttpHeaders, body: Buffer, creds: AwsCreds, region: string, now = Date.now()): SigCheck {
  const auth = one(headers.authorization) ?? "";
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return { ok: false, type: "IncompleteSignatureException", message: "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters." };
  const [, akid, date, scopeRegion, service, signedList, signature] = m;
  if (akid !== creds.accessKeyId) return { ok: false, type: "UnrecognizedClientException", message: "The security token included in the request is invalid." };
  if (scopeRegion !== region || service !== "bedrock") return { ok: false, type: "InvalidSignatureException", message: `Credential should be scoped to a valid region and service ('${region}', 'bedrock').` };
  const amzDate = one(headers["x-amz-date"]) ?? "";
  const at = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"));
  if (!Number.isFinite(at) || !amzDate.startsWith(date!)) return { ok: false, type: "IncompleteSignatureException", message: "x-amz-date is missing or does not match the credential scope's date." };
  if (Math.abs(now - at) > 5 * 60_000) return { ok: false, type: "InvalidSignatureException", message: "Signature expired: the request time is too far from the server time." };
  const signed = signedList!.split(";");
  if (!signed.includes("host") || !signed.includes("x-amz-date")) return { ok: false, type: "InvalidSignatureException", message: "'Host' and 'X-Amz-Date' must be signed." };
  const hash = one(headers["x-amz-content-sha256"]);
  if (hash !== undefined && hash !== sha256(body)) return { ok: false, type: "InvalidSignatureException", message: "The provided 'x-amz-content-sha256' header does not match what was computed." };
  if (creds.sessionToken !== undefined) {
    if (one(headers["x-amz-security-token"]) !== creds.sessionToken) return { ok: false, type: "UnrecognizedClientException", message: "The security token included in the request is invalid." };
    if (!signed.includes("x-amz-security-token")) return { ok: false, type: "InvalidSignatureException", message: MISMATCH };
  }
  const expected = signatureFor(method, url, headers, signed, body, creds.secretAccessKey, `${date}/${scopeRegion}/${service}/aws4_request`, amzDate);
  return expected === signature ? { ok: true } : { ok: false, type: "InvalidSignatureException", message: MISMATCH };
}
