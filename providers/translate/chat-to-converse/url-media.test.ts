import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Target } from "../../../core/contracts/provider.ts";
import { DEFAULT_URL_FETCH, type Resolver, type UrlFetchOptions } from "../../../core/net/url-fetch.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "../../../test/helpers/https-loopback.ts";
import { chatToConverseRequest } from "./request.ts";

const PDF = Buffer.from("%PDF-1.4\n%%EOF\n");
const nova: Target = { modelId: "amazon/nova", provider: "bedrock", upstreamModel: "amazon.nova-pro-v1:0", pricing: {} };
let files: HttpsLoopback;
// Test DNS: img.test is the loopback server, allowed by name (the guard refuses loopback addresses otherwise).
const resolver: Resolver = async (host) => (host === "img.test" ? [{ address: "127.0.0.1", family: 4 }] : []);
const policy = (): UrlFetchOptions => ({ ...DEFAULT_URL_FETCH, allowHosts: ["img.test"], resolver, ca: TEST_CERT });
const url = (path: string) => `https://img.test:${files.port}${path}`;
const image = (u: string) => ({ type: "image_url", image_url: { url: u } });

beforeAll(async () => {
  files = await startHttpsLoopback((req, res) => {
    if (req.url === "/r.pdf") return void res.writeHead(200, { "content-type": "application/pdf" }).end(PDF);
    if (req.url === "/page") return void res.writeHead(200, { "content-type": "text/html" }).end("<html>Sign in</html>");
    res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1);
  });
});
afterAll(() => files?.close());

describe("Converse: image_url URLs downloaded into bytes blocks", () => {
  it("an image URL becomes an image block, a PDF URL a document named after the data: URL documents, each attempt alike", async () => {
    const t = chatToConverseRequest({ messages: [{ role: "user", content: [
      image(url("/a.png")),
      { type: "file", file: { file_data: `data:application/pdf;base64,${PDF.toString("base64")}` } },
      image(url("/r.pdf")),
      { type: "text", text: "Describe", cache_control: { type: "ephemeral" } },
    ] }] }, nova);
    const bytes = { image: { format: "png", source: { bytes: PNG_1x1.toString("base64") } } };
    const doc = (name: string) => ({ document: { format: "pdf", name, source: { bytes: PDF.toString("base64") } } });
    const expected = [bytes, doc("document-1"), doc("document-2"), { text: "Describe" }, { cachePoint: { type: "default" } }];
    for (let attempt = 0; attempt < 2; attempt++) {
      await t.urls!.download(policy(), new AbortController().signal);
      expect((t.body.messages as any)[0].content).toEqual(expected);
    }
  });

  it("a URL serving neither an image nor a PDF is a 400 naming the field", async () => {
    const t = chatToConverseRequest({ messages: [{ role: "user", content: [{ type: "text", text: "x" }, image(url("/page"))] }] }, nova);
    await expect(t.urls!.download(policy(), new AbortController().signal)).rejects.toMatchObject({
      status: 400, details: { field: "messages[0].content[1].image_url.url", reason: "unsupported_media_type" },
    });
  });

  it("a data: URL needs no download; an image_url that is no http(s) URL is a 400 naming the field", () => {
    expect(chatToConverseRequest({ messages: [{ role: "user", content: [image(`data:image/png;base64,${PNG_1x1.toString("base64")}`)] }] }, nova).urls).toBeUndefined();
    expect(() => chatToConverseRequest({ messages: [{ role: "user", content: [image("ftp://x/y.png")] }] }, nova))
      .toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "messages[0].content[0].image_url.url" }) }));
  });
});
