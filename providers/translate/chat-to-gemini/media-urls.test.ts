import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONCURRENCY, inlineUrls, MAX_URLS, type PendingUrl } from "./media-urls.ts";
import { DEFAULT_URL_FETCH, type Resolver, type UrlFetchOptions } from "../../../core/net/url-fetch.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "../../../test/helpers/https-loopback.ts";

let img: HttpsLoopback;
let inflight = 0, maxInflight = 0, slowCut = 0;
// Test DNS: img.test is the loopback server, allowed by name (the guard refuses loopback addresses otherwise).
const resolver: Resolver = async (host) => (host === "img.test" ? [{ address: "127.0.0.1", family: 4 }] : []);
const policy = (): UrlFetchOptions => ({ ...DEFAULT_URL_FETCH, allowHosts: ["img.test"], resolver, ca: TEST_CERT });
const pending = (url: string): PendingUrl => ({ part: { fileData: { mimeType: "image/jpeg", fileUri: url } }, url, field: "messages[0].content[1].image_url.url" });

beforeAll(async () => {
  img = await startHttpsLoopback((req, res) => {
    if (req.url === "/cat.png") return void res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1);
    if (req.url === "/raw") return void res.writeHead(200, { "content-type": "application/octet-stream" }).end(PNG_1x1);
    if (req.url === "/page") return void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<html>Sign in</html>");
    if (req.url === "/doc") return void res.writeHead(200, { "content-type": "application/octet-stream" }).end("%PDF-1.7 ...");
    if (req.url!.startsWith("/delay")) {
      inflight++;
      maxInflight = Math.max(maxInflight, inflight);
      return void setTimeout(() => (inflight--, res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1)), 50);
    }
    if (req.url === "/slow") {
      res.on("close", () => { if (!res.writableFinished) slowCut++; });
      return void setTimeout(() => { if (!res.destroyed) res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1); }, 3000);
    }
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

describe("downloads for Gemini are bounded per request", () => {
  const url = (path: string) => `https://img.test:${img.port}${path}`;
  const data = PNG_1x1.toString("base64");

  it("an HTML page (a login wall, an error body served 200) is a 400 naming the field, not text/html inlineData; an octet-stream PDF is sniffed", async () => {
    const page = pending(url("/page"));
    await expect(inlineUrls([page], policy(), new AbortController().signal)).rejects.toMatchObject({
      status: 400, message: expect.stringContaining("messages[0].content[1].image_url.url is not an image or a PDF, audio or video file (the URL served text/html)"),
      details: { field: "messages[0].content[1].image_url.url", reason: "unsupported_media_type" },
    });
    expect(page.part.inlineData).toBeUndefined();
    const doc = pending(url("/doc"));
    await inlineUrls([doc], policy(), new AbortController().signal);
    expect((doc.part.inlineData as any).mimeType).toBe("application/pdf");
  });

  it(`more than ${MAX_URLS} URLs is a 400 naming the first one past the cap, before any download; at most ${CONCURRENCY} at a time`, async () => {
    img.requests.length = 0;
    const many = Array.from({ length: MAX_URLS + 1 }, (_, i) => ({ ...pending(url(`/delay${i}.png`)), field: `messages[0].content[${i}].image_url.url` }));
    await expect(inlineUrls(many, policy(), new AbortController().signal)).rejects.toMatchObject({
      status: 400, details: { field: `messages[0].content[${MAX_URLS}].image_url.url`, reason: "too_many_urls", max_urls: MAX_URLS },
    });
    expect(img.requests).toHaveLength(0);
    maxInflight = 0;
    await inlineUrls(many.slice(0, 12), policy(), new AbortController().signal);
    expect(img.requests).toHaveLength(12);
    expect(maxInflight).toBeLessThanOrEqual(CONCURRENCY);
  });

  it("one failed download cancels the ones still running (the 400 comes at once, the slow server sees its connection closed)", async () => {
    slowCut = 0;
    const t = Date.now();
    await expect(inlineUrls([pending(url("/slow")), { ...pending(url("/gone.png")), field: "messages[0].content[2].image_url.url" }], policy(), new AbortController().signal))
      .rejects.toMatchObject({ status: 400, details: { field: "messages[0].content[2].image_url.url", reason: "http_status" } });
    expect(Date.now() - t).toBeLessThan(1500);
    await new Promise((r) => setTimeout(r, 200));
    expect(slowCut).toBe(1);
  });

  it("retries and fallbacks of one client request (same signal) download each URL once; another request downloads again", async () => {
    img.requests.length = 0;
    const request = new AbortController().signal;
    const attempt = () => [pending(url("/cat.png")), pending(url("/cat.png"))];
    for (let i = 0; i < 3; i++) {
      const parts = attempt();
      await inlineUrls(parts, policy(), request);
      expect(parts.map((p) => p.part)).toEqual([{ inlineData: { mimeType: "image/png", data } }, { inlineData: { mimeType: "image/png", data } }]);
    }
    expect(img.requests).toHaveLength(1);
    await inlineUrls(attempt(), policy(), new AbortController().signal);
    expect(img.requests).toHaveLength(2);
  });
});
