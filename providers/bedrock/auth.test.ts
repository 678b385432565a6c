import { describe, expect, it } from "vitest";
import { SignatureV4 } from "@smithy/signature-v4";
import { Sha256 } from "@aws-crypto/sha256-js";
import { createBedrockAuth, sign } from "./auth.ts";
import { bedrockUrl } from "./url.ts";
import type { Target } from "../../core/contracts/provider.ts";

const creds = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const date = new Date("2025-01-02T03:04:05Z");
const target = (upstreamModel: string): Target => ({ modelId: "x/y", provider: "bedrock", upstreamModel, pricing: {} });

describe("SigV4 (reference protocols-2 §2.7 test vectors)", () => {
  it("signs a Converse call with `:` in the model id over the double-encoded path", async () => {
    const url = bedrockUrl({ protocol: "bedrock" }, target("anthropic.claude-3-haiku-20240307-v1:0"), "us-east-1", "converse");
    expect(url).toBe("https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse");
    const signer = new SignatureV4({ credentials: creds, region: "us-east-1", service: "bedrock", sha256: Sha256 });
    const out = await sign(signer, { url, headers: { "content-type": "application/json" }, body: '{"messages":[{"role":"user","content":[{"text":"hi"}]}]}' }, date);
    expect(out.headers["x-amz-content-sha256"]).toBe("c3335e07d6e89650bf94cb98664be69f8774dbc3198df221f113db0a59ea14f0");
    expect(out.headers.authorization).toBe("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250102/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date, Signature=f467416797b09e026ad153b9a9fbacef070b2f1d884ed4384983920b2d509e46");
  });

  it("signs with a session token (sent and signed), openai-node's fixture", async () => {
    const signer = new SignatureV4({ credentials: { ...creds, sessionToken: "fixture-session-token" }, region: "us-east-1", service: "bedrock-mantle", sha256: Sha256 });
    const out = await sign(signer, { url: "https://bedrock-mantle.us-east-1.api.aws/openai/v1/responses", headers: { "content-type": "application/json" }, body: '{"model":"gpt-4o","input":"hello"}' }, date);
    expect(out.headers["x-amz-security-token"]).toBe("fixture-session-token");
    expect(out.headers.authorization).toContain("SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=dc20c8fbe516daf0ccae7e5b7a78fc2936870413a9f1af6e1b2d44b970ce411f");
  });

  it("an ARN is one path segment (`/` -> %2F)", () => {
    const url = bedrockUrl({ protocol: "bedrock", base_url: "http://127.0.0.1:9/" }, target("arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3-3-70b-instruct-v1:0"), "us-east-1", "converse-stream");
    expect(url).toBe("http://127.0.0.1:9/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.meta.llama3-3-70b-instruct-v1%3A0/converse-stream");
  });
});

describe("credentials", () => {
  const req = { url: "https://bedrock-runtime.eu-west-1.amazonaws.com/model/m/converse", headers: { "content-type": "application/json" }, body: "{}" };
  it("an API key (provider's or the project's own) is a bearer token and wins over SigV4", async () => {
    const auth = createBedrockAuth("bedrock", { protocol: "bedrock", api_key: "bedrock-api-key-abc", aws_access_key_id: "AK", aws_secret_access_key: "SK" }, {});
    expect((await auth.authorize(req, target("m"))).headers.authorization).toBe("Bearer bedrock-api-key-abc");
    expect((await auth.authorize(req, { ...target("m"), credentials: { apiKey: "byok" } })).headers.authorization).toBe("Bearer byok");
  });

  it("AWS_* variables fill what the provider leaves unset; region from the provider first", async () => {
    const env = { AWS_ACCESS_KEY_ID: "AKENV", AWS_SECRET_ACCESS_KEY: "secret", AWS_SESSION_TOKEN: "tok", AWS_REGION: "eu-west-1" };
    const auth = createBedrockAuth("bedrock", { protocol: "bedrock" }, env);
    expect(auth.region).toBe("eu-west-1");
    const out = await auth.authorize(req, target("m"));
    expect(out.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKENV\/\d{8}\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, /);
    expect(createBedrockAuth("bedrock", { protocol: "bedrock", region: "ap-south-1" }, env).region).toBe("ap-south-1");
  });

  it("no credentials at all: a clear error naming what to set", async () => {
    const auth = createBedrockAuth("bedrock", { protocol: "bedrock" }, {});
    await expect(auth.authorize(req, target("m"))).rejects.toThrow(/has no credentials: set api_key, or aws_access_key_id/);
  });
});
