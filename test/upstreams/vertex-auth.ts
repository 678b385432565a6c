// A fake Google OAuth token endpoint for service accounts (reference protocols-2 §3.4), checking what Google checks:
// grant_type jwt-bearer, an RS256 assertion whose signature verifies with the service account's public key (kid =
// private_key_id), iss = client_email, aud = the token_uri, a scope, iat/exp at most an hour apart and current.
// Errors are Google's OAuth bodies ({"error":"invalid_grant","error_description":…}). Tokens are opaque and
// short-lived when asked (expiresIn), so refresh can be exercised; the Vertex fake asks valid() about them.
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KeyObject } from "node:crypto";
import { decodeProtectedHeader, jwtVerify } from "jose";
import { listenLoopback, readRequest, sendJson } from "./http-fake.ts";

export interface ServiceAccountKey {
  /** The JSON key file's fields, as Google issues them. */
  json: Record<string, string>;
  publicKey: KeyObject;
  /** Where the JSON was written (a temporary directory). */
  file: string;
}

/** A fresh RSA key pair and its service-account JSON key file, pointing token_uri at `tokenUri`. */
export function makeServiceAccount(tokenUri: string, opts: { projectId?: string; email?: string } = {}): ServiceAccountKey {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const email = opts.email ?? "gateway@fake-project.iam.gserviceaccount.com";
  const json = {
    type: "service_account",
    project_id: opts.projectId ?? "fake-project",
    private_key_id: randomUUID().replace(/-/g, ""),
    private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    client_email: email,
    client_id: "104729384756102938475",
    auth_uri: "https://accounts.google.com/o/oauth2/auth",
    token_uri: tokenUri,
    auth_provider_x509_cert_url: "https://www.googleapis.com/oauth2/v1/certs",
    client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(email)}`,
    universe_domain: "googleapis.com",
  };
  const file = join(mkdtempSync(join(tmpdir(), "mg-vertex-sa-")), "service-account.json");
  writeFileSync(file, JSON.stringify(json, null, 2));
  return { json, publicKey, file };
}

export interface FakeTokenEndpoint {
  /** The token_uri to put in a key file. */
  tokenUri: string;
  /** Successful exchanges so far. */
  exchanges: number;
  /** Refused exchanges so far, with Google's error_description. */
  refusals: string[];
  /** Lifetime of the tokens issued from now on, in seconds (Google: 3599). */
  expiresIn: number;
  /** Scripted answers for the next exchanges (after the checks pass): a status and body, e.g. a 503. */
  failures: { status: number; body: unknown }[];
  /** Accounts it knows: client_email -> the key's id and public key. */
  trust(sa: ServiceAccountKey): void;
  /** Whether an access token was issued here and has not expired or been revoked. */
  valid(token: string | undefined): boolean;
  /** An access token issued out of band (what `gcloud auth print-access-token` prints), not counted as an exchange. */
  issue(): string;
  /** Revoke every issued token (the Vertex fake then answers 401). */
  revokeAll(): void;
  close(): Promise<void>;
}

const SHORT_LIVED = "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.";

export async function startFakeTokenEndpoint(): Promise<FakeTokenEndpoint> {
  const accounts = new Map<string, { kid: string; key: KeyObject }>();
  const issued = new Map<string, number>();
  const fake: FakeTokenEndpoint = {
    tokenUri: "",
    exchanges: 0,
    refusals: [],
    expiresIn: 3599,
    failures: [],
    trust: (sa) => void accounts.set(sa.json.client_email!, { kid: sa.json.private_key_id!, key: sa.publicKey }),
    valid: (token) => {
      const exp = token ? issued.get(token) : undefined;
      return exp !== undefined && Date.now() < exp;
    },
    issue: () => {
      const token = `ya29.fake-direct-${randomUUID().slice(0, 8)}`;
      issued.set(token, Date.now() + 3599_000);
      return token;
    },
    revokeAll: () => issued.clear(),
    close: () => server.close(),
  };

  const refuse = (res: Parameters<typeof sendJson>[0], error: string, description: string, status = 400) => {
    fake.refusals.push(description);
    sendJson(res, status, { error, error_description: description });
  };

  const server = await listenLoopback(async (req, res) => {
    const rec = await readRequest(req);
    if (req.method !== "POST" || req.url !== "/token") return sendJson(res, 404, { error: "not_found" });
    if (!String(req.headers["content-type"]).startsWith("application/x-www-form-urlencoded")) return refuse(res, "invalid_request", "Invalid content type");
    const form = new URLSearchParams(rec.raw.toString("utf8"));
    if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") return refuse(res, "unsupported_grant_type", "Invalid grant_type: " + form.get("grant_type"));
    const assertion = form.get("assertion") ?? "";
    let header: ReturnType<typeof decodeProtectedHeader>;
    let claims: any;
    try {
      header = decodeProtectedHeader(assertion);
      claims = JSON.parse(Buffer.from(assertion.split(".")[1] ?? "", "base64url").toString("utf8"));
    } catch {
      return refuse(res, "invalid_grant", "Invalid JWT: malformed");
    }
    const account = accounts.get(claims?.iss);
    if (!account) return refuse(res, "invalid_grant", "Invalid grant: account not found");
    if (header.alg !== "RS256") return refuse(res, "invalid_grant", "Invalid JWT: unsupported alg " + header.alg);
    if (header.kid !== undefined && header.kid !== account.kid) return refuse(res, "invalid_grant", "Invalid JWT Signature.");
    try {
      await jwtVerify(assertion, account.key, { algorithms: ["RS256"], issuer: claims.iss, audience: fake.tokenUri, clockTolerance: 60 });
    } catch (err: any) {
      if (err?.code === "ERR_JWS_SIGNATURE_VERIFICATION_FAILED") return refuse(res, "invalid_grant", "Invalid JWT Signature.");
      if (err?.code === "ERR_JWT_CLAIM_VALIDATION_FAILED" && err.claim === "aud") return refuse(res, "invalid_grant", "Invalid JWT: Failed audience check. The expected audience is " + fake.tokenUri);
      return refuse(res, "invalid_grant", SHORT_LIVED);
    }
    const now = Date.now() / 1000;
    if (typeof claims.iat !== "number" || typeof claims.exp !== "number" || claims.exp - claims.iat > 3600 || claims.iat > now + 60) return refuse(res, "invalid_grant", SHORT_LIVED);
    if (typeof claims.scope !== "string" || !claims.scope.split(" ").includes("https://www.googleapis.com/auth/cloud-platform")) {
      return refuse(res, "invalid_scope", "Invalid OAuth scope or ID token audience provided.");
    }
    const scripted = fake.failures.shift();
    if (scripted) return sendJson(res, scripted.status, scripted.body);
    fake.exchanges++;
    const token = `ya29.fake-${fake.exchanges}-${randomUUID().slice(0, 8)}`;
    issued.set(token, Date.now() + fake.expiresIn * 1000);
    sendJson(res, 200, { access_token: token, expires_in: fake.expiresIn, token_type: "Bearer" });
  });
  fake.tokenUri = `${server.origin}/token`;
  return fake;
}
