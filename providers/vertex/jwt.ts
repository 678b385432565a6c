// The service account's self-signed assertion for the OAuth 2.0 JWT bearer grant (RFC 7523; reference
// protocols-2 §3.4): RS256 with the key file's private key, kid = private_key_id, valid for one hour. `jose` is
// imported with the first key, not with the gateway.
import type { CryptoKey } from "jose";
import type { ServiceAccount } from "./service-account.ts";

export const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";
/** Google refuses assertions valid for more than an hour. */
export const ASSERTION_LIFETIME_S = 3600;

export type SigningKey = CryptoKey;

export async function importSigningKey(sa: ServiceAccount): Promise<SigningKey> {
  const { importPKCS8 } = await import("jose");
  return importPKCS8(sa.privateKey, "RS256");
}

export async function signAssertion(sa: ServiceAccount, key: SigningKey, nowMs: number, scope = CLOUD_PLATFORM_SCOPE): Promise<string> {
  const { SignJWT } = await import("jose");
  const iat = Math.floor(nowMs / 1000);
  return new SignJWT({ scope })
    .setProtectedHeader({ alg: "RS256", typ: "JWT", ...(sa.privateKeyId ? { kid: sa.privateKeyId } : {}) })
    .setIssuer(sa.clientEmail)
    .setAudience(sa.tokenUri)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ASSERTION_LIFETIME_S)
    .sign(key);
}
