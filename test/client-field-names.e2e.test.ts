// A field a translated upstream cannot take is named as the client sent it, through the gateway: a Messages client
// and a Responses client sending a schema Gemini's conversion refuses, a Responses client and a Gemini client sending
// an image type Anthropic refuses. The chat step in between (client -> chat -> upstream) never leaks its own names
// (tools[1].function.parameters, messages[1].content[1].image_url.url) or indices (instructions and systemInstruction
// become chat's messages[0]). Every refusal comes before any upstream call.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";

const KEY = testKey("client-field-names");
const GEMINI = "google/gemini-2.5-flash";
const CLAUDE = "anthropic/claude-sonnet-4.5";
const auth = { authorization: `Bearer ${KEY}` };
/** More $refs inside one another than Gemini's schema conversion inlines. */
function refChain() {
  const defs: Record<string, unknown> = { C200: { type: "string" } };
  for (let i = 0; i < 200; i++) defs[`C${i}`] = { $ref: `#/$defs/C${i + 1}` };
  return { type: "object", properties: { x: { $ref: "#/$defs/C0" } }, $defs: defs };
}
const ok = { type: "object", properties: { a: { type: "string" } } };
const BMP = "Qk0=";

let gemini: FakeGemini;
let anthropic: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  gemini = await startFakeGemini();
  anthropic = await startFakeAnthropic();
  gw = await startTestGateway({
    providers: {
      gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
      ant: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
    },
    models: {
      [GEMINI]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing: { input: "0.0000003", output: "0.0000025" } }] },
      [CLAUDE]: { type: "language", endpoints: [{ provider: "ant", model: "claude-sonnet-4-5", pricing: { input: "0.000003", output: "0.000015" } }] },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await gemini?.close();
  await anthropic?.close();
});

/** The 400 names `field` in its details and at the start of its message. */
function namesField(r: { status: number; json: any }, field: string) {
  expect(r.status).toBe(400);
  expect(r.json.error.details).toMatchObject({ field });
  expect(r.json.error.message.startsWith(field)).toBe(true);
}

describe("a translated upstream's refusal names the client's own field", () => {
  it("Messages client, Gemini model: a tool's input_schema Gemini cannot take", async () => {
    const body = { model: GEMINI, max_tokens: 50, system: "s", messages: [{ role: "user", content: "x" }], tools: [{ name: "a", input_schema: ok }, { name: "b", input_schema: refChain() }] };
    namesField(await postJson(`${gw.baseURL}/messages`, body, { "x-api-key": KEY, "anthropic-version": "2023-06-01" }), "tools[1].input_schema");
    expect(gemini.requests).toHaveLength(0);
  });

  it("Responses client, Gemini model: text.format.schema; Claude model: an input_image Anthropic refuses", async () => {
    const schema = { model: GEMINI, instructions: "s", input: "x", text: { format: { type: "json_schema", name: "o", schema: refChain() } } };
    const r = await postJson(`${gw.baseURL}/responses`, schema, auth);
    namesField(r, "text.format.schema");
    expect(r.json.error.param).toBe("text.format.schema");
    const image = { model: CLAUDE, instructions: "s", input: [{ role: "user", content: [{ type: "input_text", text: "look" }, { type: "input_image", image_url: `data:image/bmp;base64,${BMP}` }] }] };
    namesField(await postJson(`${gw.baseURL}/responses`, image, auth), "input[0].content[1].image_url");
    expect(gemini.requests).toHaveLength(0);
    expect(anthropic.requests).toHaveLength(0);
  });

  it("Gemini client, Claude model: an inlineData image Anthropic refuses (Google's field violation)", async () => {
    const body = { systemInstruction: { parts: [{ text: "s" }] }, contents: [{ role: "user", parts: [{ text: "look" }, { inlineData: { mimeType: "image/bmp", data: BMP } }] }] };
    const res = await fetch(`${gw.url}/api/v1beta/models/${CLAUDE}:generateContent`, { method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": KEY }, body: JSON.stringify(body) });
    expect(res.status).toBe(400);
    const json: any = await res.json();
    expect(json.error.message.startsWith("contents[0].parts[1].inlineData")).toBe(true);
    expect(json.error.details).toContainEqual(expect.objectContaining({ fieldViolations: [expect.objectContaining({ field: "contents[0].parts[1].inlineData" })] }));
    expect(anthropic.requests).toHaveLength(0);
  });
});
