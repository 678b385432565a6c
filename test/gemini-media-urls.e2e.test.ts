// Client image URLs a Gemini model needs downloaded (audit r42, review 1): fetched once per client request whatever
// the retries and fallbacks, refused with a 400 naming the field when the URL serves a web page, and bounded in number.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "./helpers/https-loopback.ts";
import type { Resolver, UrlFetchOptions } from "../core/net/url-fetch.ts";
import { MAX_URLS } from "../providers/translate/chat-to-gemini/media-urls.ts";

const LIVE = testKey("gemini-media-urls");
const OTHER = testKey("gemini-media-urls-beta");
const auth = { authorization: `Bearer ${LIVE}` };
/** The smallest pool the schema allows: 32 MiB a project, so one 19 MiB image (25.3 MiB as base64) fits, two do not. */
const POOL = 64 * 1024 * 1024;
const NINETEEN_MIB = Buffer.concat([PNG_1x1, Buffer.alloc(19 * 1024 * 1024)]);
const model = "google/gemini-2.5-flash";
let gemini: FakeGemini;
let gw: TestGateway;
let img: HttpsLoopback;
/** Test DNS: img.test is the loopback image server (allowed by name); nothing else resolves. */
const resolver: Resolver = async (host) => (host === "img.test" ? [{ address: "127.0.0.1", family: 4 }] : []);

beforeAll(async () => {
  gemini = await startFakeGemini();
  img = await startHttpsLoopback((req, res) => {
    if (req.url === "/login") return void res.writeHead(200, { "content-type": "text/html" }).end("<html>Sign in</html>");
    if (req.url!.startsWith("/nineteen.png")) return void res.writeHead(200, { "content-type": "image/png" }).end(NINETEEN_MIB);
    res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1);
  });
  const pricing = { input: "0.0000003", output: "0.0000025" };
  gw = await startTestGateway({
    server: { url_fetch: { allow_hosts: ["img.test"], max_bytes_in_flight: POOL } },
    providers: {
      gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
      gem2: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
    },
    models: { [model]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing }, { provider: "gem2", model: "gemini-2.5-flash", pricing }] } },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] }, beta: { keys: [keyEntry("ci", OTHER)] } },
  });
  Object.assign(gw.gateway.config.server.urlFetch as UrlFetchOptions, { resolver, ca: TEST_CERT });
});
afterAll(async () => {
  await gw?.close();
  await gemini?.close();
  await img?.close();
});

const ask = (paths: string[]) => ({ model, messages: [{ role: "user", content: [{ type: "text", text: "x" }, ...paths.map((p) => ({ type: "image_url", image_url: { url: `https://img.test:${img.port}${p}` } }))] }] });

describe("image URLs downloaded for Gemini", () => {
  it("a failed attempt and its fallback download each image once, and both attempts carry it", async () => {
    img.requests.length = 0;
    gemini.requests.length = 0;
    gemini.failures.push({ kind: "status", status: 503 });
    const r = await postJson(`${gw.baseURL}/chat/completions`, ask(["/a.png", "/b.png"]), auth);
    expect(r.status).toBe(200);
    expect(gemini.requests).toHaveLength(2);
    expect(img.requests.map((q) => q.path).sort()).toEqual(["/a.png", "/b.png"]);
    for (const q of gemini.requests) expect(q.body.contents[0].parts[1]).toEqual({ inlineData: { mimeType: "image/png", data: PNG_1x1.toString("base64") } });
  });

  it("a URL serving a web page is a 400 naming the field (Gemini never gets text/html as an image)", async () => {
    gemini.requests.length = 0;
    const r = await postJson(`${gw.baseURL}/chat/completions`, ask(["/a.png", "/login"]), auth);
    expect(r.status).toBe(400);
    expect(r.json.error.details).toMatchObject({ field: "messages[0].content[2].image_url.url", reason: "unsupported_media_type" });
    expect(gemini.requests).toHaveLength(0);
  });

  it("a request's downloaded image counts against server.url_fetch.max_bytes_in_flight until the request ends (a slow stream), one project at most half of it: its next big image is a 429, another project's gets through", async () => {
    gemini.requests.length = 0;
    gemini.chunkDelayMs = 300; // the upstream's stream runs for seconds after the download is done
    try {
      const streaming = postJson(`${gw.baseURL}/chat/completions`, { ...ask(["/nineteen.png?a"]), stream: true }, auth);
      for (let i = 0; i < 300 && gemini.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(gemini.requests).toHaveLength(1); // downloaded and sent: the request now waits on its stream
      const second = await postJson(`${gw.baseURL}/chat/completions`, ask(["/nineteen.png?b"]), auth);
      expect(second.status, second.text).toBe(429);
      expect(second.headers.get("retry-after")).toBe("2");
      expect(second.json.error).toMatchObject({
        code: "RATE_LIMITED", param: "messages[0].content[1].image_url.url",
        details: { reason: "project_downloads_busy", setting: "server.url_fetch.max_bytes_in_flight", max_bytes_in_flight: POOL },
      });
      // Another project's image is not starved by the first one's.
      const other = await postJson(`${gw.baseURL}/chat/completions`, ask(["/nineteen.png?c"]), { authorization: `Bearer ${OTHER}` });
      expect(other.status, other.text).toBe(200);
      expect((await streaming).status).toBe(200);
    } finally {
      gemini.chunkDelayMs = 0;
    }
    // The stream over, its bytes are given back: the same image goes through now.
    expect((await postJson(`${gw.baseURL}/chat/completions`, ask(["/nineteen.png?d"]), auth)).status).toBe(200);
  });

  it(`more than ${MAX_URLS} URLs is a 400 before any download`, async () => {
    img.requests.length = 0;
    const r = await postJson(`${gw.baseURL}/chat/completions`, ask(Array.from({ length: MAX_URLS + 1 }, (_, i) => `/p${i}.png`)), auth);
    expect(r.status).toBe(400);
    expect(r.json.error.details).toMatchObject({ field: `messages[0].content[${MAX_URLS + 1}].image_url.url`, reason: "too_many_urls" });
    expect(img.requests).toHaveLength(0);
  });
});
