// Bedrock Converse (Nova, Llama, Mistral, Claude through Converse) fetches no URLs either, so an image or PDF URL a
// client sent to a Converse model was a 400 there while Claude on Bedrock InvokeModel took it (claude-url-sources.ts).
// The gateway now downloads such a URL through server.url_fetch, as for Gemini and Claude on Bedrock, and sends
// Converse's bytes blocks; a URL it may not download is a 400 naming the client's field before any upstream call.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "./helpers/https-loopback.ts";
import { startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";
import { fakeBedrockProvider } from "./helpers/fake-bedrock-provider.ts";
import type { Resolver, UrlFetchOptions } from "../core/net/url-fetch.ts";

const KEY = testKey("converse-urls");
const PDF = Buffer.from("%PDF-1.4\n%%EOF\n");
const MODEL = "t/nova";
/** Test DNS: img.test is the loopback file server (allowed by name); nothing else resolves. */
const resolver: Resolver = async (host) => (host === "img.test" ? [{ address: "127.0.0.1", family: 4 }] : []);
let bedrock: FakeBedrock;
let files: HttpsLoopback;
let gw: TestGateway;

beforeAll(async () => {
  bedrock = await startFakeBedrock();
  files = await startHttpsLoopback((req, res) => {
    if (req.url?.endsWith(".pdf")) return void res.writeHead(200, { "content-type": "application/pdf" }).end(PDF);
    if (req.url?.endsWith(".html")) return void res.writeHead(200, { "content-type": "text/html" }).end("<html></html>");
    res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1);
  });
  gw = await startTestGateway({
    server: { url_fetch: { allow_hosts: ["img.test"] } },
    providers: { br: fakeBedrockProvider(bedrock) },
    models: {
      [MODEL]: { type: "language", context_window: 300_000, max_tokens: 5000, endpoints: [{ provider: "br", model: "amazon.nova-pro-v1:0", pricing: { input: "0.0000008", output: "0.0000032" } }] },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
  Object.assign(gw.gateway.config.server.urlFetch as UrlFetchOptions, { resolver, ca: TEST_CERT });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([bedrock?.close(), files?.close()]);
});

const url = (path: string) => `https://img.test:${files.port}${path}`;
const messages = (content: unknown[]) => postJson(`${gw.baseURL}/messages`, { model: MODEL, max_tokens: 50, messages: [{ role: "user", content }] }, { "x-api-key": KEY, "anthropic-version": "2023-06-01" });
const responses = (content: unknown[]) => postJson(`${gw.baseURL}/responses`, { model: MODEL, input: [{ role: "user", content }] }, { authorization: `Bearer ${KEY}` });
const gemini = (parts: unknown[]) => postJson(`${gw.url}/api/v1beta/models/${MODEL}:generateContent`, { contents: [{ role: "user", parts }] }, { "x-goog-api-key": KEY });
const chat = (content: unknown[]) => postJson(`${gw.baseURL}/chat/completions`, { model: MODEL, messages: [{ role: "user", content }] }, { authorization: `Bearer ${KEY}` });
/** The content of the first message of the one Converse call made since `from`. */
const sentContent = (from: number) => {
  const calls = bedrock.requests.slice(from);
  expect(calls).toHaveLength(1);
  expect(calls[0]!.action).toBe("converse");
  return calls[0]!.body.messages[0].content;
};
const pngBlock = { image: { format: "png", source: { bytes: PNG_1x1.toString("base64") } } };
const pdfBlock = (name: string) => ({ document: { format: "pdf", name, source: { bytes: PDF.toString("base64") } } });

describe("Bedrock Converse: image and document URLs", () => {
  it("a chat client's image URL and PDF URL arrive as bytes blocks", async () => {
    const from = bedrock.requests.length;
    const r = await chat([
      { type: "text", text: "Describe" },
      { type: "image_url", image_url: { url: url("/a.png") } },
      { type: "image_url", image_url: { url: url("/r.pdf") } },
    ]);
    expect(r.status, r.text).toBe(200);
    expect(sentContent(from)).toEqual([{ text: "Describe" }, pngBlock, pdfBlock("document-1")]);
  });

  it("a Messages client's image and document URLs arrive as bytes blocks, beside a base64 PDF with its own name", async () => {
    const from = bedrock.requests.length;
    const r = await messages([
      { type: "image", source: { type: "url", url: url("/b.png") } },
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF.toString("base64") } },
      { type: "document", source: { type: "url", url: url("/s.pdf") } },
      { type: "text", text: "Describe" },
    ]);
    expect(r.status, r.text).toBe(200);
    expect(sentContent(from)).toEqual([pngBlock, pdfBlock("document-1"), pdfBlock("document-2"), { text: "Describe" }]);
  });

  it("a Responses client's input_file file_url (a PDF) arrives as a document, as its input_image URL does", async () => {
    const from = bedrock.requests.length;
    const r = await responses([
      { type: "input_text", text: "Describe" },
      { type: "input_file", file_url: url("/r.pdf") },
      { type: "input_image", image_url: url("/a.png") },
    ]);
    expect(r.status, r.text).toBe(200);
    expect(sentContent(from)).toEqual([{ text: "Describe" }, pdfBlock("document-1"), pngBlock]);
  });

  it("a Responses file_url serving neither an image nor a PDF is a 400 naming file_url, with no upstream call", async () => {
    const from = bedrock.requests.length;
    const r = await responses([{ type: "input_text", text: "Describe" }, { type: "input_file", file_url: url("/page.html") }]);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.details).toMatchObject({ field: "input[0].content[1].file_url", reason: "unsupported_media_type" });
    expect(bedrock.requests.length).toBe(from);
  });

  it("a Gemini client's fileData PDF by URL arrives as a document, as its image fileData does", async () => {
    const from = bedrock.requests.length;
    const r = await gemini([
      { text: "Describe" },
      { fileData: { mimeType: "application/pdf", fileUri: url("/r.pdf") } },
      { fileData: { mimeType: "image/png", fileUri: url("/a.png") } },
    ]);
    expect(r.status, r.text).toBe(200);
    expect(sentContent(from)).toEqual([{ text: "Describe" }, pdfBlock("document-1"), pngBlock]);
  });

  it("a URL url_fetch may not download is a 400 naming the client's field, with no upstream call", async () => {
    const from = bedrock.requests.length;
    const m = await messages([{ type: "text", text: "Describe" }, { type: "image", source: { type: "url", url: "https://nowhere.invalid/a.png" } }]);
    expect(m.status, m.text).toBe(400);
    expect(m.json.error.details).toMatchObject({ field: "messages[0].content[1].source.url" });
    const c = await chat([{ type: "text", text: "Describe" }, { type: "image_url", image_url: { url: "https://nowhere.invalid/a.png" } }]);
    expect(c.status, c.text).toBe(400);
    expect(c.json.error.details).toMatchObject({ field: "messages[0].content[1].image_url.url" });
    expect(bedrock.requests.length).toBe(from);
  });

  it("a URL serving neither an image nor a PDF is a 400 naming the field, with no upstream call", async () => {
    const from = bedrock.requests.length;
    const r = await messages([{ type: "document", source: { type: "url", url: url("/page.html") } }, { type: "text", text: "Describe" }]);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.details).toMatchObject({ field: "messages[0].content[0].source.url", reason: "unsupported_media_type" });
    expect(bedrock.requests.length).toBe(from);
  });
});
