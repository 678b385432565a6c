// Client image URLs a Gemini model needs downloaded (audit r42, review 1): fetched once per client request whatever
// the retries and fallbacks, refused with a 400 naming the field when the URL serves a web page, and bounded in number.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "./helpers/https-loopback.ts";
import type { Resolver, UrlFetchOptions } from "../core/net/url-fetch.ts";
import { MAX_URLS } from "../providers/translate/chat-to-gemini/media-urls.ts";

const LIVE = testKey("gemini-media-urls");
const auth = { authorization: `Bearer ${LIVE}` };
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
    if (req.url === "/two-mib.png") return void res.writeHead(200, { "content-type": "image/png" }).end(Buffer.concat([PNG_1x1, Buffer.alloc(2 * 1024 * 1024)]));
    res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1);
  });
  const pricing = { input: "0.0000003", output: "0.0000025" };
  gw = await startTestGateway({
    server: { url_fetch: { allow_hosts: ["img.test"], max_bytes_in_flight: 1024 * 1024 } },
    providers: {
      gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
      gem2: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
    },
    models: { [model]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing }, { provider: "gem2", model: "gemini-2.5-flash", pricing }] } },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
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

  it("past server.url_fetch.max_bytes_in_flight (all requests' downloads at once) a download is a 429 naming the setting, not more memory", async () => {
    gemini.requests.length = 0;
    const r = await postJson(`${gw.baseURL}/chat/completions`, ask(["/two-mib.png"]), auth);
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBe("2");
    expect(r.json.error).toMatchObject({
      code: "RATE_LIMITED", param: "messages[0].content[1].image_url.url",
      details: { reason: "downloads_busy", setting: "server.url_fetch.max_bytes_in_flight", max_bytes_in_flight: 1024 * 1024 },
    });
    expect(gemini.requests).toHaveLength(0);
    // Small images still go through: the bound counts bytes held, and the refused request gave its back.
    expect((await postJson(`${gw.baseURL}/chat/completions`, ask(["/a.png"]), auth)).status).toBe(200);
  });

  it(`more than ${MAX_URLS} URLs is a 400 before any download`, async () => {
    img.requests.length = 0;
    const r = await postJson(`${gw.baseURL}/chat/completions`, ask(Array.from({ length: MAX_URLS + 1 }, (_, i) => `/p${i}.png`)), auth);
    expect(r.status).toBe(400);
    expect(r.json.error.details).toMatchObject({ field: `messages[0].content[${MAX_URLS + 1}].image_url.url`, reason: "too_many_urls" });
    expect(img.requests).toHaveLength(0);
  });
});
