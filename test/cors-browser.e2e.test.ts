// A web page on another origin calling the gateway from a real browser (headless Chromium, test/helpers/browser.ts)
// with the official SDKs bundled into the page (openai, @anthropic-ai/sdk, @google/genai), against the gateway as
// shipped with server.cors listing the page's origin: JSON answers and streams read to their end, errors the SDKs
// recognise (401, 429) with the headers they read, the gateway's own 404 readable; a preflight is neither billed,
// recorded nor rate-limited (max_age_s 0: every call preflights, and a key allowed one request a minute still gets its
// request). The same page served from an origin not listed is refused by the browser, and nothing reaches a provider.
// A reload changes the origins; without server.cors a preflight is the 405 it always was, with no CORS header.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import YAML from "yaml";
import type { Page } from "playwright-core";
import { launchBrowser, type TestBrowser } from "./helpers/browser.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY, SHIPPED_PROJECT } from "./helpers/shipped-config.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";

const TEXT = "Hello from the fake upstream, streaming word by word to the very end.";
const TIGHT_KEY = testKey("corstight");
const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The three SDKs as one script for the page: `window.SDK`. */
async function sdkBundle(): Promise<string> {
  const entry = 'import OpenAI from "openai"; import Anthropic from "@anthropic-ai/sdk"; import { GoogleGenAI } from "@google/genai"; globalThis.SDK = { OpenAI, Anthropic, GoogleGenAI };';
  const out = await build({ stdin: { contents: entry, resolveDir: ROOT, loader: "js" }, bundle: true, write: false, format: "iife", platform: "browser", target: "chrome120", minify: true, keepNames: true, logLevel: "error" });
  return out.outputFiles[0]!.text;
}

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let pages: Server;
let gw: TestGateway;
let browser: TestBrowser;
let config: Record<string, any>;
/** The page's origins: listed in server.cors, and the same server under another name (another origin), not listed. */
let allowed: string;
let other: string;

beforeAll(async () => {
  const [script] = await Promise.all([
    sdkBundle(),
    (async () => {
      openai = await startFakeOpenAI({ text: TEXT });
      anthropic = await startFakeAnthropic();
    })(),
  ]);
  pages = createServer((req, res) => {
    if (req.url === "/sdk.js") return void res.writeHead(200, { "content-type": "text/javascript" }).end(script);
    res.writeHead(200, { "content-type": "text/html" }).end('<!doctype html><meta charset="utf-8"><title>app</title><script src="/sdk.js"></script>');
  });
  await new Promise<void>((r) => pages.listen(0, "127.0.0.1", r));
  const port = (pages.address() as AddressInfo).port;
  allowed = `http://127.0.0.1:${port}`;
  other = `http://localhost:${port}`;
  config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.server = { ...config.server, cors: { allow_origins: [allowed], max_age_s: 0 } };
  config.projects.tight = { keys: [keyEntry("tight-live", TIGHT_KEY)], allow_models: ["*"], rate_limits: { rpm: 1 } };
  [gw, browser] = await Promise.all([startTestGateway(config, { env: providerEnv(config) }), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await new Promise<void>((r) => (pages ? pages.close(() => r()) : r()));
  await openai?.close();
  await anthropic?.close();
});

async function open(origin: string): Promise<Page> {
  const page = await browser.context.newPage();
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => (globalThis as any).SDK !== undefined);
  return page;
}

/** A function run in the page (serialized by playwright: it sees the page's globals only). */
type PageCall = (arg: { base: string; key: string }) => Promise<unknown>;

/** What the page's script saw of one call: its result, or the error the SDK threw (class, status, message). */
const CALLS = {
  async chat({ base, key }: { base: string; key: string }) {
    const { OpenAI } = (globalThis as any).SDK;
    const client = new OpenAI({ baseURL: `${base}/api/v1`, apiKey: key, dangerouslyAllowBrowser: true, maxRetries: 0 });
    try {
      const { data, response } = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }).withResponse();
      return {
        text: data.choices[0].message.content,
        requestId: response.headers.get("x-request-id"),
        cost: response.headers.get("x-mg-cost-usd"),
        remaining: response.headers.get("x-ratelimit-remaining-requests"),
      };
    } catch (e: any) {
      return { error: e.constructor.name, status: e.status, requestId: e.requestID ?? null, retryAfter: e.headers?.get?.("retry-after") ?? null, message: String(e.message) };
    }
  },
  async chatStream({ base, key }: { base: string; key: string }) {
    const { OpenAI } = (globalThis as any).SDK;
    const client = new OpenAI({ baseURL: `${base}/api/v1`, apiKey: key, dangerouslyAllowBrowser: true, maxRetries: 0 });
    let text = "";
    let chunks = 0;
    let finish = null;
    const stream = await client.chat.completions.create({ model: "openai/gpt-4o-mini", stream: true, messages: [{ role: "user", content: "Hi" }] });
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta?.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    return { text, chunks, finish };
  },
  async messages({ base, key }: { base: string; key: string }) {
    const { Anthropic } = (globalThis as any).SDK;
    const client = new Anthropic({ baseURL: `${base}/api`, apiKey: key, dangerouslyAllowBrowser: true, maxRetries: 0 });
    const json = await client.messages.create({ model: "anthropic/claude-sonnet-4.5", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] });
    const streamed = await client.messages.stream({ model: "anthropic/claude-sonnet-4.5", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] }).finalMessage();
    return { json: json.content[0].text, streamed: streamed.content[0].text, stop: streamed.stop_reason };
  },
  async gemini({ base, key }: { base: string; key: string }) {
    const { GoogleGenAI } = (globalThis as any).SDK;
    const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: `${base}/api`, retryOptions: { attempts: 1 } } });
    const r = await ai.models.generateContent({ model: "openai/gpt-4o-mini", contents: "Hi" });
    let streamed = "";
    for await (const chunk of await ai.models.generateContentStream({ model: "openai/gpt-4o-mini", contents: "Hi" })) streamed += chunk.text ?? "";
    return { text: r.text, streamed };
  },
  /** A plain fetch with no header of its own (no preflight): the gateway's own 404 envelope. */
  async notFound({ base }: { base: string; key: string }) {
    try {
      const res = await fetch(`${base}/api/v1/no-such-route`);
      return { status: res.status, body: await res.json(), requestId: res.headers.get("x-request-id") };
    } catch (e: any) {
      return { error: String(e) };
    }
  },
} satisfies Record<string, PageCall>;
const call = (page: Page, name: keyof typeof CALLS, key = SHIPPED_KEY): Promise<any> => page.evaluate(CALLS[name] as PageCall, { base: gw.url, key });
const recordsOf = async (project: string) => (await gw.gateway.store.ledger({ project })).length;

describe("server.cors: a page on another origin calls the gateway from Chromium", () => {
  it("the openai SDK: a JSON answer with the headers it reads, and a stream read to its end", async () => {
    const page = await open(allowed);
    const json = await call(page, "chat");
    expect(json).toMatchObject({ text: TEXT, requestId: expect.stringMatching(/^req_/), cost: expect.stringMatching(/^\d/), remaining: expect.stringMatching(/^\d+$/) });
    const stream = await call(page, "chatStream");
    expect(stream.text).toBe(TEXT);
    expect(stream.finish).toBe("stop");
    expect(stream.chunks).toBeGreaterThan(5);
    await page.close();
  });

  it("@anthropic-ai/sdk (its direct-browser-access header) and @google/genai: JSON and streams", async () => {
    const page = await open(allowed);
    const claude = await call(page, "messages");
    expect(claude.json.length).toBeGreaterThan(0);
    expect(claude.streamed).toBe(claude.json);
    expect(claude.stop).toBe("end_turn");
    const gemini = await call(page, "gemini");
    expect(gemini.text).toBe(TEXT);
    expect(gemini.streamed).toBe(TEXT);
    await page.close();
  });

  it("errors reach the page as the SDK's own (401, 429 with Retry-After), and the gateway's 404 is readable", async () => {
    const page = await open(allowed);
    expect(await call(page, "chat", testKey("nobody"))).toMatchObject({ error: "AuthenticationError", status: 401, requestId: expect.stringMatching(/^req_/) });
    // One request a minute: the first call's preflight took none of it, its request is answered; the next is a 429.
    const before = await recordsOf("tight");
    expect(await call(page, "chat", TIGHT_KEY)).toMatchObject({ text: TEXT });
    expect(await call(page, "chat", TIGHT_KEY)).toMatchObject({ error: "RateLimitError", status: 429, retryAfter: expect.stringMatching(/^\d+$/) });
    expect(await call(page, "notFound")).toMatchObject({ status: 404, body: { error: { code: "NOT_FOUND" } }, requestId: expect.stringMatching(/^req_/) });
    await page.close();
    // Preflights are not recorded: one record, the answered request's.
    await expect.poll(() => recordsOf("tight")).toBe(before + 1);
  });

  it("a page from an origin not listed: the browser refuses every call, and none reaches a provider", async () => {
    const page = await open(other);
    const upstream = openai.requests.length;
    const records = await recordsOf(SHIPPED_PROJECT);
    const refused = await call(page, "chat");
    expect(refused).toMatchObject({ error: "APIConnectionError" });
    expect(await call(page, "notFound")).toMatchObject({ error: expect.stringMatching(/Failed to fetch/) });
    await page.close();
    expect(openai.requests.length).toBe(upstream);
    expect(await recordsOf(SHIPPED_PROJECT)).toBe(records);
    // What the browser was told (visible in its developer tools): 403 naming the setting.
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: "OPTIONS", headers: { origin: other, "access-control-request-method": "POST" } });
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect((await res.json()).error.message).toContain("server.cors.allow_origins");
  });

  it("no CORS for the operator's paths: the admin API, the probes", async () => {
    for (const path of ["/admin/v1/keys", "/healthz"]) {
      const res = await fetch(`${gw.url}${path}`, { method: "OPTIONS", headers: { origin: allowed, "access-control-request-method": "GET" } });
      expect(res.headers.get("access-control-allow-origin"), path).toBeNull();
      expect(res.status, path).not.toBe(204);
    }
  });

  it("the MCP endpoint's preflight lists its methods and takes its headers", async () => {
    const res = await fetch(`${gw.url}/api/mcp`, { method: "OPTIONS", headers: { origin: allowed, "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type,mcp-protocol-version,mcp-session-id" } });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-methods")).toBe("POST, GET, DELETE");
    expect(res.headers.get("access-control-allow-headers")).toBe("authorization, content-type, mcp-protocol-version, mcp-session-id");
  });

  it("a reload changes the origins; without server.cors a preflight is the 405 it always was, with no CORS header", async () => {
    const preflight = (origin: string) => fetch(`${gw.baseURL}/chat/completions`, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } });
    const reload = async (cors: unknown) => {
      writeFileSync(gw.configFile, YAML.stringify({ ...config, server: { ...config.server, cors } }));
      expect((await gw.gateway.reload(gw.configFile)).ok).toBe(true);
    };
    await reload({ allow_origins: [other] });
    expect((await preflight(other)).status).toBe(204);
    expect((await preflight(allowed)).status).toBe(403);
    await reload(undefined);
    for (const origin of [other, allowed]) {
      const res = await preflight(origin);
      expect(res.status).toBe(405);
      expect([...res.headers.keys()].filter((h) => h.startsWith("access-control-") || h === "vary")).toEqual([]);
    }
    const answer = await fetch(`${gw.baseURL}/models`, { headers: { origin: allowed, authorization: `Bearer ${SHIPPED_KEY}` } });
    expect(answer.status).toBe(200);
    expect([...answer.headers.keys()].filter((h) => h.startsWith("access-control-") || h === "vary")).toEqual([]);
  });
});
