import { describe, expect, it } from "vitest";
import { redact, redactDeep, rememberConfigSecrets, rememberSecret, rememberSentCredentials, runtimeSecretCounts } from "./registry.ts";
import { GatewayError } from "../errors.ts";

describe("the process's secret registry", () => {
  it("masks the credential header values the upstream client sent, without their scheme", () => {
    rememberSentCredentials({ authorization: "Bearer ya29.minted-at-run-time-0001", "x-api-key": "sk-ant-sent-0001", accept: "application/json-not-secret" });
    expect(redact("echo: ya29.minted-at-run-time-0001 / sk-ant-sent-0001 / application/json-not-secret")).toBe(
      "echo: [redacted] / [redacted] / application/json-not-secret",
    );
  });

  it("keeps a SigV4 Authorization out (unique per request); its key id comes from the config", () => {
    const sigv4 = "AWS4-HMAC-SHA256 Credential=AKIAXXXX/20250101/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=0123456789abcdef0123";
    rememberSentCredentials({ authorization: sigv4 });
    expect(redact("Signature=0123456789abcdef0123")).toBe("Signature=0123456789abcdef0123");
  });

  it("keeps nothing per SigV4 request: 20k signed requests leave the registry's size where it was", () => {
    const before = runtimeSecretCounts();
    for (let i = 0; i < 20_000; i++) {
      const sig = i.toString(16).padStart(64, "0");
      rememberSentCredentials({ authorization: `AWS4-HMAC-SHA256 Credential=AKIAXXXX/20250101/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=${sig}` });
    }
    expect(runtimeSecretCounts()).toEqual(before);
  });

  it("bounds the seen-header set even for values that never become secrets (too short to mask)", () => {
    for (let i = 0; i < 20_000; i++) rememberSentCredentials({ "x-api-key": `k${i}`.slice(0, 7) });
    expect(runtimeSecretCounts().seenHeaders).toBeLessThanOrEqual(1024);
    // A real credential still gets in and is masked after the set was emptied.
    rememberSentCredentials({ authorization: "Bearer ya29.after-many-short-values-0002" });
    expect(redact("token ya29.after-many-short-values-0002")).toBe("token [redacted]");
  });

  it("masks a loaded config's secrets and run-time secrets in GatewayError messages and details as they are built", () => {
    rememberConfigSecrets({}, ["sk-config-key-0123456789"]);
    rememberSecret("minted-assertion-0123456789");
    const err = new GatewayError(502, "UPSTREAM_ERROR", "upstream said: key sk-config-key-0123456789 invalid", {
      details: { upstream_error: { message: "assertion minted-assertion-0123456789", headers: { "x-api-key": "sk-config-key-0123456789" } } },
    });
    expect(err.message).toBe("upstream said: key [redacted] invalid");
    expect(JSON.stringify(err.toJSON())).not.toMatch(/sk-config-key|minted-assertion/);
    expect(err.stack).not.toContain("sk-config-key");
    expect(redactDeep(["sk-config-key-0123456789"])).toEqual(["[redacted]"]);
  });
});
