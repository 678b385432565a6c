// Signed asset URLs: HMAC-SHA256 over the path and the expiry, so a link works for anyone who holds it
// until it expires, and nobody can forge or extend one. The signature is the credential (no API key).
import { createHmac, timingSafeEqual } from "node:crypto";

export function signature(secret: string, path: string, expires: number): string {
  return createHmac("sha256", secret).update(`${path}\n${expires}`).digest("base64url");
}

export function signedUrl(secret: string, base: string, path: string, expires: number): string {
  return `${base.replace(/\/+$/, "")}${path}?expires=${expires}&sig=${signature(secret, path, expires)}`;
}

export type Verdict = "ok" | "invalid" | "expired";

/** Checks the signature first, so an expired-but-forged link is "invalid" (404), never "expired" (410). */
export function verify(secret: string, path: string, expiresRaw: string | null, sig: string | null, nowSec = Date.now() / 1000): Verdict {
  if (!expiresRaw || !sig || !/^\d{1,12}$/.test(expiresRaw)) return "invalid";
  const expires = Number(expiresRaw);
  const want = Buffer.from(signature(secret, path, expires));
  const got = Buffer.from(sig);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return "invalid";
  return nowSec >= expires ? "expired" : "ok";
}
