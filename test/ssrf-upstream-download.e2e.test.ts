// URLs an upstream hands back never reach inside the network (security audit t_ssrf_images / t_ssrf_video): an
// image answer's data[].url, Sora's content redirect and Veo's video.uri are fetched directly only on the provider's
// own origin; anything else, and every redirect off that origin, goes through the client-URL guard
// (core/net/url-fetch.ts: public addresses only, pinned, re-checked per redirect, server.url_fetch.allow_hosts).
// A refusal is a 502 UPSTREAM_ERROR naming why; no byte of the target reaches the client, and the internal
// service is never even connected to. Only loopback is ever contacted: names reach a server solely through the
// injected resolver.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "./helpers/https-loopback.ts";
import { listenLoopback, type Loopback } from "./upstreams/http-fake.ts";
import { encodeMp4 } from "../providers/sim/mp4.ts";
import type { Resolver, UrlFetchOptions } from "../core/net/url-fetch.ts";

const KEY = "sk-ssrf-upstream-key-0123456789";
const SECRET = "INTERNAL-SECRET-9f3c1e";
const MP4 = encodeMp4({ width: 32, height: 18, fps: 2, frames: 4, frame: () => new Uint8Array(32 * 18 * 3).fill(77) });

/** What the fake upstream answers next (set per test). */
const plan = { imageUrl: "", soraRedirect: undefined as string | undefined, veoUri: "", veoRedirect: "" };
const seen: { method: string; path: string; headers: IncomingMessage["headers"] }[] = [];

let up: Loopback;
let internal: { port: number; connections: number; close(): Promise<void> };
let cdn: HttpsLoopback;
let cdnHeaders: IncomingMessage["headers"][];
let closedPort: number;
let gw: TestGateway;
let metrics: string;

const DNS: Record<string, string[]> = { "cdn.img.test": ["127.0.0.1"] };
const resolver: Resolver = async (host) => {
  const a = DNS[host];
  if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return a.map((address) => ({ address, family: 4 }));
};

function json(res: ServerResponse, body: unknown) {
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
}

/** An OpenAI- and Gemini-protocol upstream whose download URLs and redirects the test picks. */
async function upstream(req: IncomingMessage, res: ServerResponse) {
  for await (const _ of req); // the body is not needed
  const u = new URL(req.url!, "http://x");
  seen.push({ method: req.method!, path: req.url!, headers: req.headers });
  if (u.pathname === "/v1/images/generations") return json(res, { created: 1, data: [{ url: plan.imageUrl }], usage: { input_tokens: 3, output_tokens: 10 } });
  if (u.pathname === "/redirect") return void res.writeHead(302, { location: u.searchParams.get("to")! }).end();
  if (u.pathname === "/files/img.png") return void res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1);
  if (u.pathname === "/v1/videos" || u.pathname === "/v1/videos/video_1") {
    return json(res, { id: "video_1", object: "video", status: "completed", seconds: "4", size: "1280x720" });
  }
  if (u.pathname === "/v1/videos/video_1/content") {
    if (plan.soraRedirect) return void res.writeHead(302, { location: plan.soraRedirect }).end();
    return void res.writeHead(200, { "content-type": "video/mp4" }).end(MP4);
  }
  if (u.pathname.endsWith(":predictLongRunning")) {
    return json(res, { name: "operations/op1", done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { uri: plan.veoUri } }] } } });
  }
  if (u.pathname.startsWith("/v1beta/files/")) return void res.writeHead(302, { location: plan.veoRedirect }).end();
  if (u.pathname.startsWith("/storage/")) return void res.writeHead(200, { "content-type": "video/mp4" }).end(MP4);
  res.writeHead(404).end();
}

/** An internal plain-http service (the stand-in for metrics, an admin API): counts every connection. */
async function startInternal() {
  const sockets = new Set<Socket>();
  const out = { port: 0, connections: 0, close: async () => {} };
  const server: Server = createServer((_req, res) => res.writeHead(200, { "content-type": "image/png" }).end(SECRET));
  server.on("connection", (s) => {
    out.connections++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  out.port = (server.address() as AddressInfo).port;
  out.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return out;
}

beforeAll(async () => {
  up = await listenLoopback((req, res) => void upstream(req, res));
  internal = await startInternal();
  cdnHeaders = [];
  cdn = await startHttpsLoopback((req, res) => {
    cdnHeaders.push(req.headers);
    res.writeHead(200, { "content-type": "video/mp4" }).end(MP4);
  });
  const probe = await listenLoopback(() => {});
  closedPort = probe.port;
  await probe.close();
  gw = await startTestGateway(mediaConfig({
    server: { url_fetch: { allow_hosts: ["*.img.test"], timeout_ms: 5000 } },
    providers: {
      openai: { protocol: "openai", base_url: `${up.origin}/v1`, api_key: KEY },
      gemini: { protocol: "gemini", base_url: up.origin, api_key: KEY },
    },
    models: {
      "openai/sora-2": {
        type: "video", limits: { durations: [4, 8, 12], aspect_ratios: ["16:9", "9:16"], poll_initial_ms: 5, poll_max_ms: 20 },
        endpoints: [{ provider: "openai", model: "sora-2", pricing: { video_second: "0.1" } }],
      },
      "google/veo-3": {
        type: "video", limits: { durations: [4, 6, 8], aspect_ratios: ["16:9", "9:16"], poll_initial_ms: 5, poll_max_ms: 20 },
        endpoints: [{ provider: "gemini", model: "veo-3.0-generate-001", pricing: { video_second: "0.4" } }],
      },
    },
  }));
  // The fetcher's test-only hooks: its DNS, and trust in the loopback servers' certificate.
  Object.assign(gw.gateway.config.server.urlFetch as UrlFetchOptions, { resolver, ca: TEST_CERT });
  metrics = `http://127.0.0.1:${new URL(gw.metricsUrl!).port}/metrics`;
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
  await internal?.close();
  await cdn?.close();
});
beforeEach(() => {
  seen.length = 0;
  cdnHeaders.length = 0;
  plan.soraRedirect = undefined;
});

const image = (url: string) => {
  plan.imageUrl = url;
  return postJson(`${gw.baseURL}/images/generations`, { model: "openai/gpt-image-1", prompt: "a red fox" }, auth(LIVE));
};
const video = (model: string) => postJson(`${gw.baseURL}/videos`, { model, prompt: "waves", duration: 4 }, auth(LIVE));

/** Nothing of the target in the answer: no data, no metrics text, no secret (plain or base64). */
function nothingLeaked(r: { status: number; json: any; text: string }) {
  expect(r.json.data).toBeUndefined();
  expect(r.text).not.toContain(SECRET);
  expect(r.text).not.toContain(Buffer.from(SECRET).toString("base64").slice(0, 16));
  expect(r.text).not.toMatch(/# (HELP|TYPE)|gateway_requests|nodejs_/);
}

/** The audit's target as it was (plain http) and over https (past the scheme check, to the address check). */
const metricsForms = [
  ["http", () => metrics, "must be an https URL: plain http is downloaded only from hosts in server.url_fetch.allow_hosts"],
  ["https", () => metrics.replace("http:", "https:"), "points at a loopback address 127.0.0.1; the gateway only downloads from public addresses"],
] as const;

describe("images: an upstream's data[].url", () => {
  it.each(metricsForms)("pointing at the gateway's own metrics listener (%s) is refused before any connection: 502, reason named", async (_scheme, url, why) => {
    const direct = await fetch(metrics); // the target is real and serves something worth stealing
    expect(direct.status).toBe(200);
    const r = await image(url());
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe("UPSTREAM_ERROR");
    expect(r.json.error.message).toBe(`Provider openai's download URL ${why}`);
    expect(r.json.error.details).toMatchObject({ provider: "openai", reason: _scheme === "http" ? "not_https" : "internal_address" });
    nothingLeaked(r);
  });

  it.each([
    ["IPv6 loopback", () => `https://[::1]:${internal.port}/metrics`, "points at a loopback address ::1"],
    ["cloud metadata", () => "https://169.254.169.254/latest/meta-data/iam/security-credentials/", "points at a cloud metadata address 169.254.169.254"],
    ["a private address", () => `https://10.0.0.7:${internal.port}/admin`, "points at a private address 10.0.0.7"],
    ["an internal service over plain http", () => `http://127.0.0.1:${internal.port}/admin`, "must be an https URL"],
    ["a file URL", () => "file:///etc/passwd", "must be an https URL"],
  ])("pointing at %s is refused", async (_name, url, why) => {
    const r = await image(url());
    expect(r.status).toBe(502);
    expect(r.json.error.message).toContain(`Provider openai's download URL ${why}`);
    nothingLeaked(r);
    expect(internal.connections).toBe(0);
  });

  it.each(metricsForms)("redirecting (from the provider's own origin) to the metrics listener (%s) is refused", async (_scheme, url, why) => {
    const to = url();
    const r = await image(`${up.origin}/redirect?to=${encodeURIComponent(to)}`);
    expect(r.status).toBe(502);
    expect(r.json.error.message).toBe(`Provider openai's download (redirected to ${new URL(to).protocol}//127.0.0.1:${new URL(to).port}) ${why}`);
    expect(seen.map((q) => q.path)).toContain(`/redirect?to=${encodeURIComponent(to)}`);
    nothingLeaked(r);
  });

  it.each(["http", "https"])("an open and a closed internal port (%s) get the same answer: no port scan", async (scheme) => {
    const open = await image(`${scheme}://127.0.0.1:${internal.port}/`);
    const closed = await image(`${scheme}://127.0.0.1:${closedPort}/`);
    expect(open.status).toBe(502);
    expect(closed.status).toBe(502);
    expect(open.json.error.message).toBe(closed.json.error.message);
    expect(open.json.error.details.reason).toBe(closed.json.error.details.reason);
    expect(internal.connections).toBe(0);
  });

  it("a URL on the provider's own origin is still downloaded and returned as b64_json", async () => {
    const r = await image(`${up.origin}/files/img.png`);
    expect(r.status).toBe(200);
    expect(r.json.data[0].b64_json).toBe(PNG_1x1.toString("base64"));
    expect(r.text).not.toContain(up.origin);
  });

  it("an image URL on a host in server.url_fetch.allow_hosts is downloaded, without the key", async () => {
    const r = await image(`https://cdn.img.test:${cdn.port}/signed/img.png?sig=x`);
    expect(r.status, r.text).toBe(200);
    expect(cdnHeaders).toHaveLength(1);
    expect(cdnHeaders[0]!.authorization).toBeUndefined();
  });
});

describe("videos: Sora's content download", () => {
  it.each(metricsForms)("a content redirect to the metrics listener (%s) is refused; nothing is stored or served", async (_scheme, url, why) => {
    plan.soraRedirect = url();
    const r = await video("openai/sora-2");
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe("UPSTREAM_ERROR");
    expect(r.json.error.message).toContain(`Provider openai's download (redirected to ${new URL(url()).protocol}//127.0.0.1:${new URL(metrics).port}) ${why}`);
    nothingLeaked(r);
    // The content endpoint itself is on the provider's origin: it got the key, as before.
    expect(seen.find((q) => q.path.includes("/content"))?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("a content redirect to an internal host is refused without connecting to it", async () => {
    plan.soraRedirect = `https://127.0.0.1:${internal.port}/secret`;
    const r = await video("openai/sora-2");
    expect(r.status).toBe(502);
    nothingLeaked(r);
    expect(internal.connections).toBe(0);
  });

  it("a redirect to a host in server.url_fetch.allow_hosts is followed, without the key", async () => {
    plan.soraRedirect = `https://cdn.img.test:${cdn.port}/signed/video.mp4?sig=x`;
    const r = await video("openai/sora-2");
    expect(r.status).toBe(200);
    expect(cdn.requests.at(-1)).toMatchObject({ path: "/signed/video.mp4?sig=x", host: `cdn.img.test:${cdn.port}` });
    expect(cdnHeaders.at(-1)!.authorization).toBeUndefined();
    const file = await fetch(r.json.data[0].url);
    expect(Buffer.from(await file.arrayBuffer()).equals(MP4)).toBe(true);
  });

  it("a connection failure off the origin says only that the download failed (no socket error text)", async () => {
    plan.soraRedirect = `https://cdn.img.test:${closedPort}/video.mp4`;
    const r = await video("openai/sora-2");
    expect(r.status).toBe(502);
    expect(r.json.error.message).toContain(`Provider openai's download (redirected to https://cdn.img.test:${closedPort}) could not be downloaded`);
    expect(r.text).not.toMatch(/ECONNREFUSED|connect|socket/i);
  });

  it("a redirect that stays on the provider's origin is followed as before", async () => {
    plan.soraRedirect = `${up.origin}/storage/video.mp4`;
    const r = await video("openai/sora-2");
    expect(r.status).toBe(200);
    expect(seen.find((q) => q.path === "/storage/video.mp4")?.headers.authorization).toBe(`Bearer ${KEY}`);
  });
});

describe("videos: Veo's video.uri", () => {
  it.each(metricsForms)("a uri on the metrics listener (%s) is refused, and the key goes nowhere", async (_scheme, url, why) => {
    plan.veoUri = url();
    const r = await video("google/veo-3");
    expect(r.status).toBe(502);
    expect(r.json.error.message).toContain(`Provider gemini's download URL ${why}`);
    nothingLeaked(r);
  });

  it("a file download redirected off the API's origin to an internal address is refused", async () => {
    plan.veoUri = `${up.origin}/v1beta/files/f1:download?alt=media`;
    plan.veoRedirect = `https://127.0.0.1:${internal.port}/latest/meta-data`;
    const r = await video("google/veo-3");
    expect(r.status).toBe(502);
    expect(r.json.error.message).toContain(`Provider gemini's download (redirected to https://127.0.0.1:${internal.port}) points at a loopback address 127.0.0.1`);
    nothingLeaked(r);
    expect(internal.connections).toBe(0);
    expect(seen.find((q) => q.path.startsWith("/v1beta/files/"))?.headers["x-goog-api-key"]).toBe(KEY);
  });

  it("the same-origin file download and its storage redirect still work", async () => {
    plan.veoUri = `${up.origin}/v1beta/files/f1:download?alt=media`;
    plan.veoRedirect = "/storage/f1";
    const r = await video("google/veo-3");
    expect(r.status).toBe(200);
    expect(seen.some((q) => q.path === "/storage/f1")).toBe(true);
  });
});
