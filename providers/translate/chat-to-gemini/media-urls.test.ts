import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CONCURRENCY, inlineUrls, MAX_TOTAL_BYTES, MAX_URLS, type PendingUrl } from "./media-urls.ts";
import { DEFAULT_URL_FETCH, type Resolver, type UrlFetchOptions } from "../../../core/net/url-fetch.ts";
import { clientDownloads } from "../../../core/net/download-pool.ts";
import { RequestAbort } from "../../../core/net/request-abort.ts";
import { base64Size } from "./download-budget.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "../../../test/helpers/https-loopback.ts";

let img: HttpsLoopback;
let inflight = 0, maxInflight = 0, slowCut = 0;
/** Bytes the image server put on the wire for /big and /held, summed over every download. */
let written = 0;
/** /held writes HELD_BYTES, then waits for this before ending. */
let release: () => void = () => {};
let released = Promise.resolve();
const HELD_BYTES = 600 * 1024;
const PNG_HEAD = Buffer.from("89504e470d0a1a0a", "hex");

/** A PNG-typed body of `size` bytes, written as fast as the client reads it, stopped when the client goes away. */
function stream(res: import("node:http").ServerResponse, size: number, end: Promise<void> | undefined) {
  res.writeHead(200, { "content-type": "image/png" });
  let left = size;
  const chunk = Buffer.alloc(64 * 1024, 1);
  PNG_HEAD.copy(chunk);
  const pump = () => {
    while (left > 0 && !res.destroyed) {
      const part = chunk.subarray(0, Math.min(left, chunk.length));
      left -= part.length;
      written += part.length;
      if (!res.write(part)) return;
    }
    if (left === 0 && !res.destroyed) void (end ?? Promise.resolve()).then(() => res.end());
  };
  res.on("drain", pump);
  pump();
}
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
    if (req.url!.startsWith("/big")) return stream(res, 19 * 1024 * 1024, undefined);
    if (req.url!.startsWith("/mib")) return stream(res, 1024 * 1024, undefined);
    if (req.url!.startsWith("/held")) return stream(res, HELD_BYTES, released);
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

describe("the bytes downloads hold are bounded as they arrive", () => {
  const url = (path: string) => `https://img.test:${img.port}${path}`;
  const at = (i: number, path: string): PendingUrl => ({ ...pending(url(path)), field: `messages[0].content[${i}].image_url.url` });

  it(`four 19 MiB images: the request's ${MAX_TOTAL_BYTES}-byte total is shared by the downloads running side by side, so all stop near it (not 4 x 19 MiB read)`, async () => {
    written = 0;
    const parts = [0, 1, 2, 3].map((i) => at(i + 1, `/big?r=${i}`));
    await expect(inlineUrls(parts, policy(), new AbortController().signal)).rejects.toMatchObject({
      status: 400, code: "INVALID_REQUEST",
      message: expect.stringContaining(`may download at most ${MAX_TOTAL_BYTES} bytes in all for Gemini`),
      details: { reason: "too_large_total", max_bytes: MAX_TOTAL_BYTES },
    });
    await new Promise((r) => setTimeout(r, 200)); // the server sees the connections close
    // What socket buffers hold past the cut is a few MiB at most; before, every download ran to its end (76 MiB).
    expect(written).toBeLessThan(MAX_TOTAL_BYTES + 8 * 1024 * 1024);
    expect(clientDownloads.inFlight).toBe(0);
  });

  afterEach(() => release()); // a failed test leaves no download waiting

  it("across requests: past server.url_fetch.max_bytes_in_flight a download is a 429 naming the setting, and what a request held is given back when it ends", async () => {
    released = new Promise<void>((r) => (release = r));
    const limited = (): UrlFetchOptions => ({ ...policy(), maxBytesInFlight: 1024 * 1024 });
    // Request A holds 600 KiB while its download has not finished; request B's 600 KiB would pass 1 MiB.
    const a = [at(1, "/held?a")];
    const first = inlineUrls(a, limited(), new AbortController().signal);
    for (let i = 0; i < 200 && clientDownloads.inFlight < HELD_BYTES; i++) await new Promise((r) => setTimeout(r, 10));
    expect(clientDownloads.inFlight).toBeGreaterThanOrEqual(HELD_BYTES);
    await expect(inlineUrls([at(2, "/held?b")], limited(), new AbortController().signal)).rejects.toMatchObject({
      status: 429, code: "RATE_LIMITED", retryAfter: 2,
      message: expect.stringContaining("messages[0].content[2].image_url.url could not be downloaded now"),
      details: { field: "messages[0].content[2].image_url.url", reason: "downloads_busy", setting: "server.url_fetch.max_bytes_in_flight" },
    });
    release();
    await first;
    expect((a[0]!.part.inlineData as { data: string }).data.length).toBeGreaterThan(HELD_BYTES);
    expect(clientDownloads.inFlight).toBe(0);
    // Once A is done, B's download fits again.
    const b = [at(2, "/held?b2")];
    await inlineUrls(b, limited(), new AbortController().signal);
    expect(b[0]!.part.inlineData).toBeDefined();
    expect(clientDownloads.inFlight).toBe(0);
  });
});

describe("what a client request downloaded stays counted until the request ends, and one project holds at most half", () => {
  const url = (path: string) => `https://img.test:${img.port}${path}`;
  const at = (i: number, path: string): PendingUrl => ({ ...pending(url(path)), field: `messages[0].content[${i}].image_url.url` });
  /** 3 MiB in all, 1.5 MiB a project: one 1 MiB image is held as 1.33 MiB of base64. */
  const limited = (): UrlFetchOptions => ({ ...policy(), maxBytesInFlight: 3 * 1024 * 1024 });
  const request = (project: string) => Object.assign(new RequestAbort(), { owner: () => project });
  const HELD = base64Size(1024 * 1024);

  it("a request whose downloads are done (waiting on its upstream) still holds its share; another project's image gets through; the pool is full until requests end", async () => {
    const a = request("alpha");
    await inlineUrls([at(1, "/mib?a")], limited(), a.signal);
    expect(clientDownloads.inFlight).toBe(HELD); // done downloading, but the request still sends and keeps the bytes
    // The same project's next request would hold more than half the pool.
    const a2 = request("alpha");
    await expect(inlineUrls([at(1, "/mib?a2")], limited(), a2.signal)).rejects.toMatchObject({
      status: 429, code: "RATE_LIMITED", retryAfter: 2,
      message: expect.stringContaining("this project's requests hold half of server.url_fetch.max_bytes_in_flight"),
      details: { reason: "project_downloads_busy", setting: "server.url_fetch.max_bytes_in_flight" },
    });
    a2.end();
    // Another project's image still fits.
    const b = request("beta");
    await inlineUrls([at(1, "/mib?b")], limited(), b.signal);
    expect(clientDownloads.inFlight).toBe(2 * HELD);
    // A third project's would pass the pool while alpha and beta have not ended (before: both were given back already).
    const c = request("gamma");
    await expect(inlineUrls([at(1, "/mib?c")], limited(), c.signal)).rejects.toMatchObject({ status: 429, details: { reason: "downloads_busy" } });
    c.end();
    a.end();
    expect(clientDownloads.inFlight).toBe(HELD);
    const c2 = request("gamma");
    await inlineUrls([at(1, "/mib?c2")], limited(), c2.signal);
    b.end();
    c2.end();
    expect(clientDownloads.inFlight).toBe(0);
    expect(clientDownloads.heldBy("alpha") + clientDownloads.heldBy("beta") + clientDownloads.heldBy("gamma")).toBe(0);
  });

  it("a fallback to another upstream kind (Gemini, then Claude on Bedrock) reuses the request's download: fetched and charged once, so no 429 for the same image; a type that kind refuses is still a 400 naming the field", async () => {
    img.requests.length = 0;
    const a = request("alpha");
    try {
      await inlineUrls([at(1, "/mib?fb")], limited(), a.signal);
      const claude = [at(1, "/mib?fb")];
      await inlineUrls(claude, limited(), a.signal, { upstream: "Claude on Bedrock and Vertex", types: ["image/png", "application/pdf"], what: "an image or a PDF" });
      expect((claude[0]!.part.inlineData as { mimeType: string }).mimeType).toBe("image/png");
      expect(img.requests).toHaveLength(1);
      expect(clientDownloads.heldBy("alpha")).toBe(HELD);
      await expect(inlineUrls([at(2, "/mib?fb")], limited(), a.signal, { upstream: "PDF only", types: ["application/pdf"], what: "a PDF" })).rejects.toMatchObject({
        status: 400, message: expect.stringContaining("messages[0].content[2].image_url.url is not a PDF"),
        details: { field: "messages[0].content[2].image_url.url", reason: "unsupported_media_type", content_type: "image/png" },
      });
    } finally {
      a.end();
    }
    expect(clientDownloads.inFlight).toBe(0);
  });

  it("a request whose downloads failed gives its share back at once, before it ends", async () => {
    const a = request("alpha");
    await expect(inlineUrls([at(1, "/mib?f"), at(2, "/page")], limited(), a.signal)).rejects.toMatchObject({ status: 400 });
    expect(clientDownloads.inFlight).toBe(0);
    a.end();
    expect(clientDownloads.inFlight).toBe(0);
  });
});

