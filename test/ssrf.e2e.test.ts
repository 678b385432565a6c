// Client URLs never reach inside the network (issue 10, item 4): Veo needs the image seed's bytes, so the
// gateway downloads image_url / last_frame_url itself — through core/net/url-fetch, which refuses internal
// addresses (also after DNS and redirects) with a 400 naming the field, before the provider hears of the request.
// Only loopback is ever contacted: "public-looking" names reach a server solely through the injected resolver.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "./helpers/https-loopback.ts";
import { GEMINI_KEY, startFakeGeminiMedia, type FakeGeminiMedia } from "./upstreams/gemini-media.ts";
import type { Resolver, UrlFetchOptions } from "../core/net/url-fetch.ts";

let up: FakeGeminiMedia;
let gw: TestGateway;
let img: HttpsLoopback;
let internal: HttpsLoopback;

/** Test DNS: names the tests use, nothing else (no query ever leaves the machine). */
const DNS: Record<string, string[]> = {
  localhost: ["127.0.0.1", "::1"],
  "img.test": ["127.0.0.1"],
  "cdn.example.com": ["169.254.169.254"],
  "assets.example.com": ["93.184.216.34", "10.20.30.40"],
};
const resolver: Resolver = async (host) => {
  const a = DNS[host];
  if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return a.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};

beforeAll(async () => {
  up = await startFakeGeminiMedia();
  img = await startHttpsLoopback((req, res) => {
    const u = new URL(req.url!, "https://x");
    if (u.pathname === "/seed.png") return void res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1);
    if (u.pathname === "/redirect") return void res.writeHead(302, { location: u.searchParams.get("to")! }).end();
    res.writeHead(404).end();
  });
  internal = await startHttpsLoopback((_req, res) => void res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1));
  gw = await startTestGateway(mediaConfig({
    server: { url_fetch: { allow_hosts: ["img.test"], max_bytes: 1024 * 1024, timeout_ms: 5000 } },
    providers: { gemini: { protocol: "gemini", base_url: up.baseUrl, api_key: GEMINI_KEY } },
    models: {
      "google/veo-3": {
        type: "video", limits: { durations: [4, 6, 8], aspect_ratios: ["16:9", "9:16"], last_frame: true, poll_initial_ms: 5, poll_max_ms: 20 },
        endpoints: [{ provider: "gemini", model: "veo-3.0-generate-001", pricing: { video_second: "0.4" } }],
      },
    },
  }));
  // The test-only hooks of the fetcher: its DNS, and trust in the loopback servers' certificate.
  Object.assign(gw.gateway.config.server.urlFetch as UrlFetchOptions, { resolver, ca: TEST_CERT });
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
  await img?.close();
  await internal?.close();
});
beforeEach(() => {
  up.requests.length = 0;
});

const video = (extra: Record<string, unknown>) => postJson(`${gw.baseURL}/videos`, { model: "google/veo-3", prompt: "a koi pond", duration: 4, ...extra }, auth(LIVE));

describe("/v1/videos seeds on a provider that needs the bytes (Veo)", () => {
  it.each([
    ["a loopback IP literal", () => `https://127.0.0.1:${internal.port}/seed.png`, "points at a loopback address 127.0.0.1"],
    ["localhost", () => `https://localhost:${internal.port}/seed.png`, "resolves to a loopback address 127.0.0.1"],
    ["a name resolving to the metadata address", () => `https://cdn.example.com:${internal.port}/seed.png`, "resolves to a cloud metadata address 169.254.169.254"],
    ["a name with one private answer among public ones", () => `https://assets.example.com:${internal.port}/seed.png`, "resolves to a private address 10.20.30.40"],
    ["the decimal form of 127.0.0.1", () => `https://2130706433:${internal.port}/seed.png`, "points at a loopback address 127.0.0.1"],
  ])("image_url as %s: 400 naming the field, nothing fetched, the provider never called", async (_name, url, why) => {
    const r = await video({ image_url: url() });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe("BAD_REQUEST");
    expect(r.json.error.message).toContain(`image_url ${why}`);
    expect(r.json.error.details).toMatchObject({ field: "image_url", reason: "internal_address" });
    expect(r.headers.get("x-request-id")).toBeTruthy();
    expect(internal.connections).toBe(0);
    expect(up.requests).toHaveLength(0);
    expect(up.operationsStarted).toBe(0);
  });

  it("last_frame_url is checked the same way and named", async () => {
    const r = await video({ image_url: `https://img.test:${img.port}/seed.png`, last_frame_url: `https://[::1]:${internal.port}/last.png` });
    expect(r.status).toBe(400);
    expect(r.json.error.details).toMatchObject({ field: "last_frame_url", address: "::1" });
    expect(internal.connections).toBe(0);
    expect(up.requests).toHaveLength(0);
  });

  it("a redirect from an allowed host to an internal address is refused; the internal server hears nothing", async () => {
    const to = encodeURIComponent(`https://127.0.0.1:${internal.port}/latest/meta-data`);
    const before = img.requests.length;
    const r = await video({ image_url: `https://img.test:${img.port}/redirect?to=${to}` });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain(`image_url points at a loopback address 127.0.0.1 (redirected to https://127.0.0.1:${internal.port})`);
    expect(img.requests.slice(before).map((q) => q.path)).toEqual([`/redirect?to=${to}`]);
    expect(internal.connections).toBe(0);
    expect(up.requests).toHaveLength(0);
  });

  it("an allowlisted internal host (server.url_fetch.allow_hosts) is fetched and its bytes inlined", async () => {
    const r = await video({ image_url: `https://img.test:${img.port}/seed.png` });
    expect(r.status).toBe(200);
    const start = up.requests.find((q) => q.path.endsWith(":predictLongRunning"))!;
    expect(start.body.instances[0].image).toEqual({ bytesBase64Encoded: PNG_1x1.toString("base64"), mimeType: "image/png" });
    expect(img.requests.at(-1)).toMatchObject({ path: "/seed.png", host: `img.test:${img.port}` });
  });

  it("the gateway still serves after the refusals", async () => {
    const r = await video({});
    expect(r.status).toBe(200);
    expect(internal.connections).toBe(0);
  });
});
