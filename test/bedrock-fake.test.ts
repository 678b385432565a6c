// The fake Bedrock must refuse what the real one refuses, or the e2e tests prove nothing: its independent SigV4
// check agrees with the reference vectors and fails on a tampered body, another region, a path encoded differently
// from the one signed, a missing session token and a wrong API key — each a 403 with Bedrock's error shape.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "undici";
import { SignatureV4 } from "@smithy/signature-v4";
import { Sha256 } from "@aws-crypto/sha256-js";
import { sign } from "../providers/bedrock/auth.ts";
import { canonicalUri, signatureFor } from "./upstreams/bedrock-sigv4.ts";
import { FAKE_AWS, FAKE_BEDROCK_API_KEY, startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";

let fake: FakeBedrock;
beforeAll(async () => { fake = await startFakeBedrock(); });
afterAll(async () => { await fake?.close(); });

const BODY = JSON.stringify({ messages: [{ role: "user", content: [{ text: "hi" }] }] });
const signer = (region = FAKE_AWS.region, sessionToken?: string) => new SignatureV4({ credentials: { ...FAKE_AWS, sessionToken }, region, service: "bedrock", sha256: Sha256 });

async function send(path: string, headers: Record<string, string>, body = BODY) {
  const r = await request(fake.baseUrl + path, { method: "POST", headers, body });
  return { status: r.statusCode, type: r.headers["x-amzn-errortype"], json: (await r.body.json()) as any };
}
async function signed(path: string, s = signer(), body = BODY) {
  return (await sign(s, { url: fake.baseUrl + path, headers: { "content-type": "application/json" }, body })).headers;
}
const PATH = "/model/meta.llama3-3-70b-instruct-v1%3A0/converse";

describe("the fake's own SigV4 implementation", () => {
  it("reproduces the reference vector (double-encoded path), and the single-encoded one differs", () => {
    const headers = { host: "bedrock-runtime.us-east-1.amazonaws.com", "content-type": "application/json", "x-amz-date": "20250102T030405Z", "x-amz-content-sha256": "c3335e07d6e89650bf94cb98664be69f8774dbc3198df221f113db0a59ea14f0" };
    const args = ["POST", "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse", headers, ["content-type", "host", "x-amz-content-sha256", "x-amz-date"], Buffer.from(BODY), "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20250102/us-east-1/bedrock/aws4_request", "20250102T030405Z"] as const;
    expect(signatureFor(...args)).toBe("f467416797b09e026ad153b9a9fbacef070b2f1d884ed4384983920b2d509e46");
    expect(canonicalUri("/model/a%3A0/converse")).toBe("/model/a%253A0/converse");
  });
});

describe("fake Bedrock authentication", () => {
  it("a correctly signed request is answered", async () => {
    const r = await send(PATH, await signed(PATH));
    expect(r.status).toBe(200);
    expect(r.json.output.message.content[0].text).toContain("fake Bedrock");
  });

  it("non-ASCII text: the signature covers the UTF-8 bytes that are sent", async () => {
    const body = JSON.stringify({ messages: [{ role: "user", content: [{ text: "héllo wörld — 你好 🚀" }] }] });
    expect((await send(PATH, await signed(PATH, signer(), body), body)).status).toBe(200);
  });

  it("a tampered body -> 403 InvalidSignatureException with Bedrock's error shape", async () => {
    const r = await send(PATH, await signed(PATH), BODY.replace("hi", "ho"));
    expect(r.status).toBe(403);
    expect(String(r.type).split(":")[0]).toBe("InvalidSignatureException");
    expect(Object.keys(r.json)).toEqual(["message"]);
  });

  it("a signed header removed on the way -> 403", async () => {
    const h = await signed(PATH);
    delete h["x-amz-content-sha256"];
    expect((await send(PATH, h)).status).toBe(403);
  });

  it("another region -> 403", async () => {
    const r = await send(PATH, await signed(PATH, signer("eu-west-1")));
    expect([r.status, String(r.type).split(":")[0]]).toEqual([403, "InvalidSignatureException"]);
  });

  it("a path sent differently from the one signed (`:` raw vs %3A) -> 403", async () => {
    const r = await send("/model/meta.llama3-3-70b-instruct-v1:0/converse", await signed(PATH));
    expect([r.status, String(r.type).split(":")[0]]).toEqual([403, "InvalidSignatureException"]);
    // Signed over what is sent, the raw `:` is fine too (reference §2.1: both work).
    const raw = "/model/meta.llama3-3-70b-instruct-v1:0/converse";
    expect((await send(raw, await signed(raw))).status).toBe(200);
  });

  it("a signer that does not encode the path again (the S3 rule) -> 403", async () => {
    const single = new SignatureV4({ credentials: FAKE_AWS, region: FAKE_AWS.region, service: "bedrock", sha256: Sha256, uriEscapePath: false });
    const r = await send(PATH, await signed(PATH, single));
    expect([r.status, String(r.type).split(":")[0]]).toEqual([403, "InvalidSignatureException"]);
  });

  it("temporary credentials: the session token must be sent and signed", async () => {
    const withToken = await startFakeBedrock({ creds: { ...FAKE_AWS, sessionToken: "session-token-1" } });
    try {
      const go = async (s: SignatureV4) => (await request(withToken.baseUrl + PATH, { method: "POST", body: BODY, headers: (await sign(s, { url: withToken.baseUrl + PATH, headers: { "content-type": "application/json" }, body: BODY })).headers })).statusCode;
      expect(await go(signer(FAKE_AWS.region, "session-token-1"))).toBe(200);
      expect(await go(signer())).toBe(403);
    } finally {
      await withToken.close();
    }
  });

  it("API keys: the right one passes, another is refused", async () => {
    expect((await send(PATH, { "content-type": "application/json", authorization: `Bearer ${FAKE_BEDROCK_API_KEY}` })).status).toBe(200);
    const r = await send(PATH, { "content-type": "application/json", authorization: "Bearer bedrock-api-key-wrong" });
    expect([r.status, String(r.type).split(":")[0]]).toEqual([403, "UnrecognizedClientException"]);
  });

  it("Converse rules: toolUse history without toolConfig is a ValidationException", async () => {
    const body = JSON.stringify({ messages: [
      { role: "user", content: [{ text: "x" }] },
      { role: "assistant", content: [{ toolUse: { toolUseId: "t", name: "f", input: {} } }] },
      { role: "user", content: [{ toolResult: { toolUseId: "t", content: [{ text: "1" }] } }] }] });
    const r = await send(PATH, await signed(PATH, signer(), body), body);
    expect([r.status, String(r.type).split(":")[0], r.json.message]).toEqual([400, "ValidationException", "The toolConfig field must be defined when using toolUse and toolResult content blocks."]);
  });

  it("Converse outputConfig: the documented shape (schema a JSON string) is answered with JSON text; the schema as an object, another type or two structures are a ValidationException", async () => {
    const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false };
    const PATH = "/model/openai.gpt-oss-120b-1%3A0/converse";
    const ask = (outputConfig: unknown) => send(PATH, { "content-type": "application/json", authorization: `Bearer ${FAKE_BEDROCK_API_KEY}` }, JSON.stringify({ messages: [{ role: "user", content: [{ text: "x" }] }], outputConfig }));
    const textFormat = (jsonSchema: unknown, extra: Record<string, unknown> = {}) => ({ textFormat: { type: "json_schema", structure: { jsonSchema }, ...extra } });
    const ok = await ask(textFormat({ schema: JSON.stringify(schema), name: "count", description: "The count." }));
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.json.output.message.content[0].text)).toEqual({ n: 4 });
    for (const bad of [textFormat({ schema }), textFormat({ schema: "not json" }), { textFormat: { type: "json_object", structure: { jsonSchema: { schema: "{}" } } } }, { textFormat: { type: "json_schema", structure: { jsonSchema: { schema: "{}" }, other: {} } } }, { format: {} }]) {
      const r = await ask(bad);
      expect([r.status, String(r.type).split(":")[0]], JSON.stringify(bad)).toEqual([400, "ValidationException"]);
    }
    expect((await ask(textFormat({ schema }))).json.message).toContain("jsonSchema/schema: expected type: String, found: JSONObject");
    // A model AWS does not list for structured outputs refuses the field (Llama 3.3 here); one it lists answers.
    const llama = await send(PATH.replace("openai.gpt-oss-120b-1%3A0", "us.meta.llama3-3-70b-instruct-v1%3A0"), { "content-type": "application/json", authorization: `Bearer ${FAKE_BEDROCK_API_KEY}` }, JSON.stringify({ messages: [{ role: "user", content: [{ text: "x" }] }], outputConfig: textFormat({ schema: JSON.stringify(schema) }) }));
    expect([llama.status, String(llama.type).split(":")[0], llama.json.message]).toEqual([400, "ValidationException", "This model doesn't support the outputConfig.textFormat field. Remove outputConfig.textFormat and try again."]);
  });
});
