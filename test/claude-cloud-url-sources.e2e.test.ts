// Claude on Bedrock (InvokeModel) and on Vertex fetches no URLs: an image or document `url` source is their 400,
// though Anthropic's own API reads it (anthropic/claude-sonnet-4.5 moves to Bedrock when its first-party endpoint
// retires; an Anthropic -> Bedrock fallback too). The gateway now downloads such a URL through server.url_fetch, as
// for Gemini, and sends a base64 source; a URL it may not download is a 400 naming the client's field before any
// upstream call.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "./helpers/https-loopback.ts";
import { startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";
import { fakeBedrockProvider } from "./helpers/fake-bedrock-provider.ts";
import { makeServiceAccount, startFakeTokenEndpoint, type FakeTokenEndpoint } from "./upstreams/vertex-auth.ts";
import { startFakeVertex, type FakeVertex } from "./upstreams/vertex.ts";
import type { Resolver, UrlFetchOptions } from "../core/net/url-fetch.ts";

const KEY = testKey("claude-cloud-urls");
const PDF = Buffer.from("%PDF-1.4\n%%EOF\n");
/** Test DNS: img.test is the loopback file server (allowed by name); nothing else resolves. */
const resolver: Resolver = async (host) => (host === "img.test" ? [{ address: "127.0.0.1", family: 4 }] : []);
let bedrock: FakeBedrock;
let tokens: FakeTokenEndpoint;
let vertex: FakeVertex;
let files: HttpsLoopback;
let gw: TestGateway;

beforeAll(async () => {
  bedrock = await startFakeBedrock();
  tokens = await startFakeTokenEndpoint();
  const sa = makeServiceAccount(tokens.tokenUri, { projectId: "fake-project" });
  tokens.trust(sa);
  vertex = await startFakeVertex(tokens, { project: "fake-project", location: "us-east5" });
  files = await startHttpsLoopback((req, res) => {
    // A PDF by its name, or by what a download link serves (`/download?id=3`).
    if (req.url?.endsWith(".pdf") || req.url?.startsWith("/download")) return void res.writeHead(200, { "content-type": "application/pdf" }).end(PDF);
    res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1);
  });
  const pricing = { input: "0.000003", output: "0.000015" };
  const model = (provider: string, upstream: string) => ({ type: "language", context_window: 200_000, max_tokens: 8192, endpoints: [{ provider, model: upstream, pricing }] });
  gw = await startTestGateway({
    server: { url_fetch: { allow_hosts: ["img.test"] } },
    providers: {
      br: fakeBedrockProvider(bedrock),
      vx: { protocol: "vertex", base_url: vertex.baseUrl, region: "us-east5", credentials_file: "sa.json" },
    },
    models: {
      "t/bedrock-claude": model("br", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
      "t/vertex-claude": model("vx", "claude-sonnet-4-5@20250929"),
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  }, { files: { "sa.json": readFileSync(sa.file, "utf8") } });
  Object.assign(gw.gateway.config.server.urlFetch as UrlFetchOptions, { resolver, ca: TEST_CERT });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([bedrock?.close(), vertex?.close(), tokens?.close(), files?.close()]);
});

const url = (path: string) => `https://img.test:${files.port}${path}`;
const messages = (model: string, content: unknown[]) => postJson(`${gw.baseURL}/messages`, { model, max_tokens: 50, messages: [{ role: "user", content }] }, { "x-api-key": KEY, "anthropic-version": "2023-06-01" });
const responses = (model: string, content: unknown[]) => postJson(`${gw.baseURL}/responses`, { model, max_output_tokens: 50, input: [{ role: "user", content }] }, { authorization: `Bearer ${KEY}` });
const gemini = (model: string, parts: unknown[]) => postJson(`${gw.url}/api/v1beta/models/${model}:generateContent`, { contents: [{ role: "user", parts }] }, { "x-goog-api-key": KEY });
const chat = (model: string, content: unknown[]) => postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content }] }, { authorization: `Bearer ${KEY}` });
/** The content of the first message of the one upstream call made since `from`. */
const sentContent = (list: { body: any }[], from: number) => {
  const calls = list.slice(from);
  expect(calls).toHaveLength(1);
  return calls[0]!.body.messages[0].content;
};

const upstreams = [
  ["Bedrock InvokeModel", "t/bedrock-claude", () => bedrock.requests],
  ["Vertex", "t/vertex-claude", () => vertex.requests],
] as const;

describe.each(upstreams)("Claude on %s: URL sources", (_, model, requests) => {
  it("a Messages client's image and document URLs arrive as base64", async () => {
    const from = requests().length;
    const r = await messages(model, [
      { type: "image", source: { type: "url", url: url("/a.png") } },
      { type: "document", source: { type: "url", url: url("/r.pdf") } },
      { type: "text", text: "Describe" },
    ]);
    expect(r.status, r.text).toBe(200);
    expect(sentContent(requests(), from)).toEqual([
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_1x1.toString("base64") } },
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF.toString("base64") } },
      { type: "text", text: "Describe" },
    ]);
  });

  it("a document URL serving an image arrives as an image block with only the fields an image takes", async () => {
    const from = requests().length;
    const r = await messages(model, [
      { type: "document", title: "x", context: "c", citations: { enabled: true }, cache_control: { type: "ephemeral" }, source: { type: "url", url: url("/c.png") } },
      { type: "text", text: "Describe" },
    ]);
    expect(r.status, r.text).toBe(200);
    // Anthropic's image block takes type, source and cache_control; Bedrock and Vertex refuse any other field (400).
    expect(sentContent(requests(), from)[0]).toEqual({
      type: "image", cache_control: { type: "ephemeral" }, source: { type: "base64", media_type: "image/png", data: PNG_1x1.toString("base64") },
    });
    // What the block lost is named, as on Converse, though it is known only once the URL has answered.
    expect(r.headers.get("x-mg-dropped-params")?.split(",")).toEqual(expect.arrayContaining([
      "messages[0].content[0].title", "messages[0].content[0].context", "messages[0].content[0].citations",
    ]));
  });

  it("a document URL serving a PDF keeps its title, context and citations", async () => {
    const from = requests().length;
    const r = await messages(model, [
      { type: "document", title: "x", context: "c", citations: { enabled: true }, source: { type: "url", url: url("/d.pdf") } },
      { type: "text", text: "Describe" },
    ]);
    expect(r.status, r.text).toBe(200);
    expect(sentContent(requests(), from)[0]).toEqual({
      type: "document", title: "x", context: "c", citations: { enabled: true }, source: { type: "base64", media_type: "application/pdf", data: PDF.toString("base64") },
    });
    expect(r.headers.get("x-mg-dropped-params") ?? "").not.toContain("messages[0].content[0]");
  });

  it("a chat client's image URL arrives as base64", async () => {
    const from = requests().length;
    const r = await chat(model, [{ type: "text", text: "Describe" }, { type: "image_url", image_url: { url: url("/b.png") } }]);
    expect(r.status, r.text).toBe(200);
    expect(sentContent(requests(), from)).toContainEqual({ type: "image", source: { type: "base64", media_type: "image/png", data: PNG_1x1.toString("base64") } });
  });

  it("a Responses file_url without .pdf in its name that serves a PDF arrives as a base64 document", async () => {
    const from = requests().length;
    const r = await responses(model, [{ type: "input_text", text: "Summarize" }, { type: "input_file", file_url: url("/download?id=3") }]);
    expect(r.status, r.text).toBe(200);
    expect(sentContent(requests(), from)).toContainEqual({ type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF.toString("base64") } });
  });

  it("a Gemini client's PDF fileData by URL arrives as a base64 document", async () => {
    const from = requests().length;
    const r = await gemini(model, [{ text: "Summarize" }, { fileData: { mimeType: "application/pdf", fileUri: url("/download?id=4") } }]);
    expect(r.status, r.text).toBe(200);
    expect(sentContent(requests(), from)).toContainEqual({ type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF.toString("base64") } });
  });

  it("a URL url_fetch may not download is a 400 naming the client's field, with no upstream call", async () => {
    const from = requests().length;
    const r = await messages(model, [{ type: "text", text: "Describe" }, { type: "image", source: { type: "url", url: "https://nowhere.invalid/a.png" } }]);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.details).toMatchObject({ field: "messages[0].content[1].source.url" });
    expect(requests().length).toBe(from);
  });
});
