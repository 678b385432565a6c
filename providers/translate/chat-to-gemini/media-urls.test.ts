import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inlineUrls, type PendingUrl } from "./media-urls.ts";
import { DEFAULT_URL_FETCH, type Resolver, type UrlFetchOptions } from "../../../core/net/url-fetch.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "../../../test/helpers/https-loopback.ts";

let img: HttpsLoopback;
// Test DNS: img.test is the loopback server, allowed by name (the guard refuses loopback addresses otherwise).
const resolver: Resolver = async (host) => (host === "img.test" ? [{ address: "127.0.0.1", family: 4 }] : []);
const policy = (): UrlFetchOptions => ({ ...DEFAULT_URL_FETCH, allowHosts: ["img.test"], resolver, ca: TEST_CERT });
const pending = (url: string): PendingUrl => ({ part: { fileData: { mimeType: "image/jpeg", fileUri: url } }, url, field: "messages[0].content[1].image_url.url" });

beforeAll(async () => {
  img = await startHttpsLoopback((req, res) => {
    if (req.url === "/cat.png") return void res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1);
    if (req.url === "/raw") return void res.writeHead(200, { "content-type": "application/octet-stream" }).end(PNG_1x1);
    res.writeHead(404).end();
  });
});
afterAll(() => img?.close());

describe("image URLs Gemini will not fetch: downloaded and inlined", () => {
  it("the bytes become inlineData with the server's type (or the bytes' own when it says octet-stream)", async () => {
    const a = pending(`https://img.test:${img.port}/cat.png`);
    const b = pending(`https://img.test:${img.port}/raw`);
    await inlineUrls([a, b], policy(), new AbortController().signal);
    expect(a.part).toEqual({ inlineData: { mimeType: "image/png", data: PNG_1x1.toString("base64") } });
    expect(b.part).toEqual({ inlineData: { mimeType: "image/png", data: PNG_1x1.toString("base64") } });
  });

  it("a URL the guard refuses (an internal address, a 404) is a 400 naming the client's field", async () => {
    const internal = pending(`https://127.0.0.1:${img.port}/cat.png`);
    await expect(inlineUrls([internal], { ...DEFAULT_URL_FETCH, ca: TEST_CERT }, new AbortController().signal)).rejects.toMatchObject({
      status: 400, code: "INVALID_REQUEST", message: expect.stringContaining("messages[0].content[1].image_url.url points at a loopback address"),
      details: { field: "messages[0].content[1].image_url.url", reason: "internal_address" },
    });
    expect(internal.part.fileData).toBeDefined();
    await expect(inlineUrls([pending(`https://img.test:${img.port}/gone.png`)], policy(), new AbortController().signal)).rejects.toMatchObject({
      status: 400, details: { field: "messages[0].content[1].image_url.url", reason: "http_status" },
    });
  });
});
