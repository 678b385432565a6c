import { describe, expect, it } from "vitest";
import { generateKeyPairSync } from "node:crypto";
import { decodeProtectedHeader, jwtVerify } from "jose";
import { importSigningKey, signAssertion, CLOUD_PLATFORM_SCOPE } from "./jwt.ts";
import { parseServiceAccount } from "./service-account.ts";

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const keyFile = { type: "service_account", project_id: "p1", private_key_id: "kid123", private_key: pem, client_email: "sa@p1.iam.gserviceaccount.com", token_uri: "https://oauth2.example/token" };

describe("service-account assertion", () => {
  it("is RS256 with kid, iss, scope, aud = token_uri and one hour of validity, verifiable with the public key", async () => {
    const sa = parseServiceAccount(JSON.stringify(keyFile), "sa.json", "vertex");
    const now = Date.UTC(2026, 0, 1, 12);
    const jwt = await signAssertion(sa, await importSigningKey(sa), now);
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: "RS256", typ: "JWT", kid: "kid123" });
    const { payload } = await jwtVerify(jwt, publicKey, { algorithms: ["RS256"], currentDate: new Date(now + 1000) });
    expect(payload).toEqual({ iss: keyFile.client_email, aud: keyFile.token_uri, scope: CLOUD_PLATFORM_SCOPE, iat: now / 1000, exp: now / 1000 + 3600 });
    // Another key does not verify it.
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey;
    await expect(jwtVerify(jwt, other, { currentDate: new Date(now) })).rejects.toThrow(/signature/);
  });

  it("reads the key file: literal \\n in the key, default token_uri, refuses other credential types", () => {
    const escaped = JSON.stringify({ ...keyFile, private_key: pem.replace(/\n/g, "\\n"), token_uri: undefined });
    const sa = parseServiceAccount(escaped, "sa.json", "vertex");
    expect(sa.privateKey).toBe(pem);
    expect(sa.tokenUri).toBe("https://oauth2.googleapis.com/token");
    expect(sa.projectId).toBe("p1");
    expect(() => parseServiceAccount(JSON.stringify({ type: "authorized_user", client_id: "x" }), "adc.json", "vertex")).toThrow(/"authorized_user" credential/);
    expect(() => parseServiceAccount("{", "sa.json", "vertex")).toThrow(/sa.json is not JSON/);
  });
});
