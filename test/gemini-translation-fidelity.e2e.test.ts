// What chat, Messages and Responses clients send a Gemini model arrives whole (audit r42, fidelity): nested JSON
// Schemas ($ref/$defs, as Pydantic writes them) keep their fields, an https image URL — which Gemini refuses as a
// fileData URI — is downloaded by the gateway and inlined, and knobs Gemini lacks are named in x-mg-dropped-params.
// The fake Gemini refuses what the real one does (unknown schema keywords, foreign fileData URIs).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "./helpers/https-loopback.ts";
import type { Resolver, UrlFetchOptions } from "../core/net/url-fetch.ts";

const LIVE = testKey("gemini-fidelity");
const model = "google/gemini-2.5-flash";
const auth = { authorization: `Bearer ${LIVE}` };
let gemini: FakeGemini;
let gw: TestGateway;
let img: HttpsLoopback;

/** Test DNS: img.test is the loopback image server (allowed by name); nothing else resolves. */
const resolver: Resolver = async (host) => (host === "img.test" ? [{ address: "127.0.0.1", family: 4 }] : []);

beforeAll(async () => {
  gemini = await startFakeGemini();
  img = await startHttpsLoopback((req, res) => {
    if (req.url === "/cat.png") return void res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1);
    res.writeHead(404).end();
  });
  gw = await startTestGateway({
    server: { url_fetch: { allow_hosts: ["img.test"] } },
    providers: { gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY } },
    models: { [model]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing: { input: "0.0000003", output: "0.0000025" } }] } },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
  Object.assign(gw.gateway.config.server.urlFetch as UrlFetchOptions, { resolver, ca: TEST_CERT });
});
afterAll(async () => {
  await gw?.close();
  await gemini?.close();
  await img?.close();
});
beforeEach(() => {
  gemini.requests.length = 0;
});

const addr = { type: "object", properties: { city: { type: "string" }, zip: { type: "string" } }, required: ["city", "zip"] };
/** What openai's chat.completions.parse(response_format=Person) sends for a Pydantic model with nested models. */
const person = { type: "object", $defs: { Addr: addr }, properties: { home: { $ref: "#/$defs/Addr" }, work: { anyOf: [{ $ref: "#/$defs/Addr" }, { type: "null" }] } }, required: ["home", "work"], additionalProperties: false };

describe("nested JSON Schemas reach Gemini with their fields", () => {
  it("chat response_format json_schema with $defs: Gemini's responseSchema has the nested fields, the answer fills them", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "x" }], response_format: { type: "json_schema", json_schema: { name: "Person", strict: true, schema: person } } }, auth);
    expect(r.status).toBe(200);
    const sent = gemini.requests.at(-1)!.body.generationConfig.responseSchema;
    expect(sent.properties.home.properties).toEqual({ city: { type: "string" }, zip: { type: "string" } });
    expect(sent.properties.work.anyOf[0].properties.city).toEqual({ type: "string" });
    expect(JSON.parse(r.json.choices[0].message.content)).toEqual({ home: { city: "sample", zip: "sample" }, work: { city: "sample", zip: "sample" } });
  });

  it("Responses text.format and a recursive tool schema: accepted by Gemini, recursion bounded", async () => {
    const r = await postJson(`${gw.baseURL}/responses`, {
      model, input: "x", text: { format: { type: "json_schema", name: "Person", schema: person } },
      tools: [{ type: "function", name: "f", parameters: { type: "object", properties: { n: { $ref: "#/$defs/node" } }, $defs: { node: { type: "object", properties: { v: { type: "integer" }, child: { $ref: "#/$defs/node" } } } } } }],
    }, auth);
    expect(r.status).toBe(200);
    const body = gemini.requests.at(-1)!.body;
    expect(body.generationConfig.responseSchema.properties.home.properties.zip).toEqual({ type: "string" });
    const n = body.tools[0].functionDeclarations[0].parameters.properties.n;
    expect(n.properties.v).toEqual({ type: "integer" });
    expect(n.properties.child.properties.child.properties.v).toEqual({ type: "integer" });
  });
});

describe("an https image URL is downloaded and inlined (Gemini fetches only its own URIs)", () => {
  const url = () => `https://img.test:${img.port}/cat.png`;
  const inlined = { inlineData: { mimeType: "image/png", data: PNG_1x1.toString("base64") } };

  it("chat image_url", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: [{ type: "text", text: "what is this" }, { type: "image_url", image_url: { url: url() } }] }] }, auth);
    expect(r.status).toBe(200);
    expect(gemini.requests.at(-1)!.body.contents[0].parts).toEqual([{ text: "what is this" }, inlined]);
  });

  it("Messages image source url and Responses input_image", async () => {
    const m = await postJson(`${gw.baseURL}/messages`, { model, max_tokens: 50, messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: url() } }, { type: "text", text: "what is this" }] }] }, { "x-api-key": LIVE, "anthropic-version": "2023-06-01" });
    expect(m.status).toBe(200);
    expect(gemini.requests.at(-1)!.body.contents[0].parts).toContainEqual(inlined);
    const r = await postJson(`${gw.baseURL}/responses`, { model, input: [{ role: "user", content: [{ type: "input_text", text: "what is this" }, { type: "input_image", image_url: url() }] }] }, auth);
    expect(r.status).toBe(200);
    expect(gemini.requests.at(-1)!.body.contents[0].parts).toContainEqual(inlined);
  });

  it("a URL that cannot be downloaded (internal address, 404) is a 400 naming the field; Gemini never called", async () => {
    const internal = await postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: [{ type: "text", text: "x" }, { type: "image_url", image_url: { url: `https://127.0.0.1:${img.port}/cat.png` } }] }] }, auth);
    expect(internal.status).toBe(400);
    expect(internal.json.error.message).toContain("messages[0].content[1].image_url.url points at a loopback address");
    const gone = await postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `https://img.test:${img.port}/gone.png` } }] }] }, auth);
    expect(gone.status).toBe(400);
    expect(gone.json.error.details).toMatchObject({ field: "messages[0].content[0].image_url.url", reason: "http_status" });
    expect(gemini.requests).toHaveLength(0);
  });
});

describe("Responses knobs Gemini lacks are named", () => {
  it("text.verbosity and service_tier in x-mg-dropped-params", async () => {
    const r = await postJson(`${gw.baseURL}/responses`, { model, input: "x", text: { verbosity: "low" }, service_tier: "flex" }, auth);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-mg-dropped-params")?.split(",")).toEqual(expect.arrayContaining(["text.verbosity", "service_tier"]));
  });
});
