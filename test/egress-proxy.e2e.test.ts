// A gateway whose host may only reach the internet through an egress proxy: the shipped gateway.yaml with
// server.egress_proxy (or the HTTP(S)_PROXY / NO_PROXY variables) pointing at a real CONNECT proxy written here,
// in front of fake upstreams. What is asserted is what the proxy saw (the tunnels it opened, to which host:port) and
// what the client got: provider calls, MCP servers and trace exports go through it, no_proxy'd hosts do not, a dead
// proxy is a prompt 502 naming it (masked), and the client-URL guard still refuses internal addresses before asking it.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import YAML from "yaml";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, SHIPPED_KEY, shippedConfig } from "./helpers/shipped-config.ts";
import { startConnectProxy, type ConnectProxy } from "./helpers/connect-proxy.ts";
import { startLoggedGateway } from "./helpers/log-capture.ts";
import { freePort } from "./helpers/ports.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "./helpers/https-loopback.ts";
import { startOtlpReceiver, type OtlpReceiver } from "./helpers/otlp-receiver.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { startMcpHttpServer, type TestMcpHttpServer } from "./mcp/http-server.ts";
import { mcpClient } from "./mcp/gateway.ts";
import type { Resolver, UrlFetchOptions } from "../core/net/url-fetch.ts";

const auth = { authorization: `Bearer ${SHIPPED_KEY}` };
const chat = (gw: TestGateway, model: string, content: unknown = "Hi") => postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content }] }, auth);
const GPT = "openai/gpt-4o-mini";
const CLAUDE = "anthropic/claude-sonnet-4.5";
const GEMINI = "google/gemini-2.5-flash";

let proxy: ConnectProxy;
let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let img: HttpsLoopback;
let mcp: TestMcpHttpServer;
let otlp: OtlpReceiver;
const portOf = (url: string) => Number(new URL(url).port);

/** The shipped config on the fakes, gemini switched on, an MCP server and a trace collector, plus `server` settings. */
function config(server: Record<string, unknown>): Record<string, any> {
  const c = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  c.providers.gemini.base_url = gemini.baseUrl;
  c.server = { ...c.server, url_fetch: { allow_hosts: ["img.test"] }, ...server };
  c.mcp_servers = { docs: { url: mcp.url, timeout_ms: 10_000 } };
  c.telemetry = { otlp: { endpoint: otlp.url } };
  return c;
}
const env = (c: Record<string, any>, extra: Record<string, string> = {}) => ({ ...providerEnv(c), GEMINI_API_KEY: FAKE_GEMINI_KEY, ...extra });

/** Test DNS for client URLs: img.test is the loopback image server (allowed by name); nothing else resolves. */
const resolver: Resolver = async (host) => (host === "img.test" ? [{ address: "127.0.0.1", family: 4 }] : []);
const testHooks = (gw: TestGateway) => Object.assign(gw.gateway.config.server.urlFetch as UrlFetchOptions, { resolver, ca: TEST_CERT });

beforeAll(async () => {
  proxy = await startConnectProxy({ user: "egress", password: "pr0xy-secret" });
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  gemini = await startFakeGemini();
  img = await startHttpsLoopback((_req, res) => void res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1));
  mcp = await startMcpHttpServer("docs");
  otlp = await startOtlpReceiver();
});
afterAll(async () => {
  await Promise.all([proxy?.close(), openai?.close(), anthropic?.close(), gemini?.close(), img?.close(), mcp?.close(), otlp?.close()]);
});
beforeEach(() => {
  proxy.tunnels.length = 0;
});

const tunnelsTo = (port: number) => proxy.tunnels.filter((t) => t.target.endsWith(`:${port}`));

describe("server.egress_proxy in the shipped config", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // Anthropic's fake is on the no_proxy list (by host and port): it is reached directly.
    const c = config({ egress_proxy: { url: proxy.url, no_proxy: [`127.0.0.1:${portOf(anthropic.baseUrl)}`] } });
    gw = await startTestGateway(c, { env: env(c) });
    testHooks(gw);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("provider calls go through CONNECT tunnels, with the proxy's credentials, and are answered", async () => {
    const before = openai.requests.length;
    for (let i = 0; i < 3; i++) expect((await chat(gw, GPT)).status).toBe(200);
    expect(openai.requests.length - before).toBe(3);
    const tunnels = tunnelsTo(openai.port);
    expect(tunnels.length).toBeGreaterThan(0);
    expect(tunnels.length).toBeLessThanOrEqual(3);
    for (const t of tunnels) expect(t).toEqual({ target: `127.0.0.1:${openai.port}`, auth: `Basic ${Buffer.from("egress:pr0xy-secret").toString("base64")}`, status: 200 });
  });

  it("a tunnel dropped mid-stream ends the stream with an error naming the proxy (masked), as a dropped connect does", async () => {
    openai.failures.push({ kind: "die-mid-stream", afterChunks: 2 });
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ model: GPT, stream: true, messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(res.status).toBe(200);
    const events = (await res.text()).split("\n\n").filter(Boolean);
    const last = JSON.parse(events.at(-1)!.replace(/^data: /, ""));
    expect(last.error).toMatchObject({ code: "UPSTREAM_ERROR", details: { provider: "openai", proxy: `http://***@127.0.0.1:${proxy.port}` } });
    expect(last.error.message).toContain(`Could not reach provider openai through the egress proxy http://***@127.0.0.1:${proxy.port}: `);
    expect(JSON.stringify(last)).not.toContain("pr0xy-secret");
  });

  it("a no_proxy host is reached directly", async () => {
    const r = await chat(gw, CLAUDE);
    expect(r.status).toBe(200);
    expect(tunnelsTo(portOf(anthropic.baseUrl))).toEqual([]);
  });

  it("a configured MCP server is reached through the proxy", async () => {
    const { client } = await mcpClient(`${gw.url}/api/mcp`, SHIPPED_KEY);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("docs__echo");
      expect(tunnelsTo(portOf(mcp.url)).length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it("spans are exported to the collector through the proxy", async () => {
    expect((await chat(gw, GPT)).status).toBe(200);
    const until = Date.now() + 10_000;
    while (!otlp.spans.length && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(otlp.spans.length).toBeGreaterThan(0);
    expect(tunnelsTo(portOf(otlp.url)).length).toBeGreaterThan(0);
  });

  it("the client-URL guard still refuses internal image URLs before the proxy hears of them", async () => {
    for (const url of ["https://10.0.0.1/x.png", "https://127.0.0.1/x.png", "https://169.254.169.254/latest/meta-data", "https://[::1]/x.png"]) {
      const r = await chat(gw, GEMINI, [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url } }]);
      expect(r.status, url).toBe(400);
      expect(r.json.error.details, url).toMatchObject({ reason: "internal_address" });
    }
    expect(proxy.tunnels).toEqual([]);
  });

  it("an allowed image URL is downloaded through a tunnel to the address the gateway checked", async () => {
    const r = await chat(gw, GEMINI, [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: `https://img.test:${img.port}/seed.png` } }]);
    expect(r.status).toBe(200);
    expect(tunnelsTo(img.port).map((t) => t.target)).toEqual([`127.0.0.1:${img.port}`]);
    expect(img.requests.at(-1)).toMatchObject({ path: "/seed.png", host: `img.test:${img.port}` });
  });
});

describe("the log", () => {
  it("says at start which proxy is in use (masked) and what skips it; no line ever holds its password", async () => {
    const c = config({ egress_proxy: { url: proxy.url.replace("pr0xy-secret", "l0g-secret"), no_proxy: ["localhost", ".corp"] } });
    const { gw, log, baseURL } = await startLoggedGateway(c, env(c));
    try {
      expect(log.records().find((r) => r.msg === "egress proxy in use")).toMatchObject({
        https: `http://***@127.0.0.1:${proxy.port} (server.egress_proxy.url)`,
        http: `http://***@127.0.0.1:${proxy.port} (server.egress_proxy.url)`,
        no_proxy: "localhost,.corp (server.egress_proxy.no_proxy)",
      });
      // A refused tunnel (wrong password: 407): neither the answer nor any line (start, tracing, access) repeats it.
      const r = await postJson(`${baseURL}/chat/completions`, { model: GPT, messages: [{ role: "user", content: "Hi" }] }, auth);
      expect(r.status).toBe(502);
      expect(r.json.error.message).toContain("refused the tunnel");
      await log.accessOnce(() => true, 1);
      expect(log.lines.join("\n")).not.toContain("l0g-secret");
      expect(r.text).not.toContain("l0g-secret");
    } finally {
      await gw.close();
    }
  });
});

describe("the proxy variables, when the config has no egress_proxy", () => {
  it("HTTP_PROXY carries the calls to http upstreams, NO_PROXY exempts hosts", async () => {
    const c = config({});
    const gw = await startTestGateway(c, { env: env(c, { HTTP_PROXY: proxy.url, NO_PROXY: `127.0.0.1:${portOf(anthropic.baseUrl)}` }) });
    try {
      expect((await chat(gw, GPT)).status).toBe(200);
      expect((await chat(gw, CLAUDE)).status).toBe(200);
      expect(tunnelsTo(openai.port).length).toBeGreaterThan(0);
      expect(tunnelsTo(portOf(anthropic.baseUrl))).toEqual([]);
    } finally {
      await gw.close();
    }
  });

  it("egress_proxy: {} sends every call direct whatever the variables say", async () => {
    const c = config({ egress_proxy: {} });
    const gw = await startTestGateway(c, { env: env(c, { HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url }) });
    try {
      expect((await chat(gw, GPT)).status).toBe(200);
      expect(proxy.tunnels).toEqual([]);
    } finally {
      await gw.close();
    }
  });
});

describe("a reload", () => {
  it("that sets server.egress_proxy sends the next provider calls through it; one that removes it, direct again", async () => {
    const direct = config({ egress_proxy: {} });
    const gw = await startTestGateway(direct, { env: env(direct) });
    try {
      expect((await chat(gw, GPT)).status).toBe(200);
      expect(proxy.tunnels).toEqual([]);
      writeFileSync(gw.configFile, YAML.stringify(config({ egress_proxy: { url: proxy.url } })));
      expect((await gw.gateway.reload()).ok).toBe(true);
      expect((await chat(gw, GPT)).status).toBe(200);
      expect(tunnelsTo(openai.port).length).toBeGreaterThan(0);
      proxy.tunnels.length = 0;
      writeFileSync(gw.configFile, YAML.stringify(direct));
      expect((await gw.gateway.reload()).ok).toBe(true);
      expect((await chat(gw, GPT)).status).toBe(200);
      expect(proxy.tunnels).toEqual([]);
    } finally {
      await gw.close();
    }
  });
});

describe("a dead proxy", () => {
  it("is a prompt retryable 502 naming the proxy (masked), not a hang; the upstream never called", async () => {
    const dead = `http://egress:dead-secret@127.0.0.1:${await freePort()}`;
    const c = config({ egress_proxy: { url: dead }, upstream_timeout_ms: 120_000 });
    const gw = await startTestGateway(c, { env: env(c) });
    try {
      const before = openai.requests.length;
      const r = await chat(gw, GPT);
      expect(r.status).toBe(502);
      expect(r.json.error.code).toBe("UPSTREAM_ERROR");
      // Retried once (a retryable 502), then given up: the last attempt's message names the proxy.
      expect(r.json.error.message).toMatch(/Could not reach provider openai through the egress proxy http:\/\/\*\*\*@127\.0\.0\.1:\d+: connect ECONNREFUSED/);
      expect(r.json.error.details).toMatchObject({ provider: "openai", proxy: expect.stringMatching(/^http:\/\/\*\*\*@127\.0\.0\.1:\d+$/) });
      expect(r.text).not.toContain("dead-secret");
      expect(openai.requests.length).toBe(before);
    } finally {
      await gw.close();
    }
  });

  it("a proxy refusing the gateway's credentials (407) says so", async () => {
    const c = config({ egress_proxy: { url: proxy.url.replace("pr0xy-secret", "wrong-secret") } });
    const gw = await startTestGateway(c, { env: env(c) });
    try {
      const r = await chat(gw, GPT);
      expect(r.status).toBe(502);
      expect(r.json.error.message).toContain(`the egress proxy http://***@127.0.0.1:${proxy.port} refused the tunnel to 127.0.0.1:${openai.port} (HTTP 407: Proxy Authentication Required, check the user and password of its URL)`);
      expect(r.text).not.toContain("wrong-secret");
    } finally {
      await gw.close();
    }
  });
});
