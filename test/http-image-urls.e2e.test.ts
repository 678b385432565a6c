// Plain-http image URLs (audit r43): a chat client's http://localhost image reaches a Gemini model as inline data
// when server.url_fetch.allow_hosts names the host (the README's promise), is refused with a 400 naming the field
// and that setting when it does not, passes through untouched to OpenAI (which fetches http URLs itself), and is
// refused for an Anthropic model (Anthropic fetches https only) before any upstream call. The image servers are
// real loopback listeners reached through the system resolver, as an operator's would be.
import { lookup } from "node:dns/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { PNG_1x1 } from "./helpers/https-loopback.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const KEY = testKey("http-image-urls");
const auth = { authorization: `Bearer ${KEY}` };
const GEMINI = "google/gemini-2.5-flash";
const GPT = "openai/gpt-4o-mini";
const CLAUDE = "anthropic/claude-sonnet-4.5";
const PNG_B64 = PNG_1x1.toString("base64");

/** A plain-http image server on one loopback address, counting what it was asked. */
interface ImageServer { port: number; paths: string[]; close(): Promise<void> }
async function imageServer(host: string): Promise<ImageServer> {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(req.url!);
    res.writeHead(200, { "content-type": "image/png" }).end(PNG_1x1);
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, host, () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    paths,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

let gemini: FakeGemini;
let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;
/** On the address the system resolver gives first for localhost (the one the gateway connects to). */
let local: ImageServer;
let v6: ImageServer;

beforeAll(async () => {
  const [first] = await lookup("localhost", { all: true, verbatim: true });
  local = await imageServer(first!.address);
  v6 = await imageServer("::1");
  gemini = await startFakeGemini();
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  gw = await startTestGateway({
    server: { url_fetch: { allow_hosts: ["localhost", "::1"] } },
    providers: {
      gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
      oai: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
      ant: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
    },
    models: {
      [GEMINI]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing: { input: "0.0000003", output: "0.0000025" } }] },
      [GPT]: { type: "language", endpoints: [{ provider: "oai", model: "gpt-4o-mini", pricing: { input: "0.00000015", output: "0.0000006" } }] },
      [CLAUDE]: { type: "language", endpoints: [{ provider: "ant", model: "claude-sonnet-4-5", pricing: { input: "0.000003", output: "0.000015" } }] },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await gemini?.close();
  await openai?.close();
  await anthropic?.close();
  await local?.close();
  await v6?.close();
});

const chat = (model: string, url: string) => ({ model, messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url } }] }] });

describe("a chat image over plain http", () => {
  it("from a host in allow_hosts (localhost, [::1]) reaches a Gemini model as inline data", async () => {
    for (const [server, url] of [[local, `http://localhost:${local.port}/img.png`], [v6, `http://[::1]:${v6.port}/img.png`]] as const) {
      gemini.requests.length = 0;
      const r = await postJson(`${gw.baseURL}/chat/completions`, chat(GEMINI, url), auth);
      expect(r.status, r.text).toBe(200);
      expect(server.paths).toEqual(["/img.png"]);
      expect(gemini.requests).toHaveLength(1);
      expect(gemini.requests[0]!.body.contents[0].parts[1]).toEqual({ inlineData: { mimeType: "image/png", data: PNG_B64 } });
    }
  });

  it("from a Responses client's input_image, the same", async () => {
    local.paths.length = 0;
    gemini.requests.length = 0;
    const body = { model: GEMINI, input: [{ role: "user", content: [{ type: "input_text", text: "what is this?" }, { type: "input_image", image_url: `http://localhost:${local.port}/r.png` }] }] };
    const r = await postJson(`${gw.baseURL}/responses`, body, auth);
    expect(r.status, r.text).toBe(200);
    expect(local.paths).toEqual(["/r.png"]);
    expect(gemini.requests[0]!.body.contents[0].parts.at(-1)).toEqual({ inlineData: { mimeType: "image/png", data: PNG_B64 } });
  });

  it("from a host not in allow_hosts is a 400 naming the field and the setting, before any download or upstream call", async () => {
    local.paths.length = 0;
    gemini.requests.length = 0;
    const field = "messages[0].content[1].image_url.url";
    const r = await postJson(`${gw.baseURL}/chat/completions`, chat(GEMINI, `http://127.0.0.2:${local.port}/img.png`), auth);
    expect(r.status).toBe(400);
    expect(r.json.error.message).toBe(`${field} must be an https URL: plain http is downloaded only from hosts in server.url_fetch.allow_hosts`);
    expect(r.json.error.details).toMatchObject({ field, reason: "not_https", setting: "server.url_fetch.allow_hosts" });
    expect(local.paths).toEqual([]);
    expect(gemini.requests).toHaveLength(0);
  });

  it("passes through to OpenAI untouched (OpenAI fetches http URLs itself)", async () => {
    openai.requests.length = 0;
    const url = "http://images.example.com/cat.png";
    const r = await postJson(`${gw.baseURL}/chat/completions`, chat(GPT, url), auth);
    expect(r.status, r.text).toBe(200);
    expect(openai.requests[0]!.body.messages[0].content[1]).toEqual({ type: "image_url", image_url: { url } });
  });

  it("for an Anthropic model is a 400 naming the field (Anthropic fetches https URLs only), before any upstream call", async () => {
    anthropic.requests.length = 0;
    const r = await postJson(`${gw.baseURL}/chat/completions`, chat(CLAUDE, "http://images.example.com/cat.png"), auth);
    expect(r.status).toBe(400);
    expect(r.json.error.details).toMatchObject({ field: "messages[0].content[1].image_url.url", reason: "not_https" });
    expect(r.json.error.message).toBe("messages[0].content[1].image_url.url: Anthropic fetches only https image URLs; send an https URL or a base64 data URL");
    expect(anthropic.requests).toHaveLength(0);
  });

  it("from a Responses client to an Anthropic model: the same 400, naming the client's own field", async () => {
    anthropic.requests.length = 0;
    const body = { model: CLAUDE, input: [{ role: "user", content: [{ type: "input_text", text: "what is this?" }, { type: "input_image", image_url: "http://images.example.com/cat.png" }] }] };
    const r = await postJson(`${gw.baseURL}/responses`, body, auth);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.param).toBe("input[0].content[1].image_url");
    expect(r.json.error.message).toBe("input[0].content[1].image_url: Anthropic fetches only https image URLs; send an https URL or a base64 data URL");
    expect(anthropic.requests).toHaveLength(0);
  });

  it("counting a Gemini model's tokens with an http image URL: the 400 names the field, not Anthropic's rule", async () => {
    gemini.requests.length = 0;
    const body = { model: GEMINI, input: [{ role: "user", content: [{ type: "input_text", text: "what is this?" }, { type: "input_image", image_url: "http://images.example.com/cat.png" }] }] };
    const r = await postJson(`${gw.baseURL}/responses/input_tokens`, body, auth);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.param).toBe("input[0].content[1].image_url");
    expect(r.json.error.details).toMatchObject({ field: "input[0].content[1].image_url", reason: "not_https" });
    expect(r.json.error.message).toMatch(/^input\[0\]\.content\[1\]\.image_url\b/);
    expect(r.json.error.message).not.toMatch(/Anthropic/);
    expect(gemini.requests).toHaveLength(0);
  });

  it("counting an OpenAI model's tokens from a Gemini client (read as a Messages count body) with an http image URL names the provider counted for", async () => {
    const body = { contents: [{ role: "user", parts: [{ text: "what is this?" }, { fileData: { mimeType: "image/png", fileUri: "http://images.example.com/cat.png" } }] }] };
    const r = await postJson(`${gw.url}/api/v1beta/models/${encodeURIComponent(GPT)}:countTokens`, body, auth);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.message).toMatch(/: counting tokens for provider "oai" takes only https image URLs; send an https URL or a base64 data URL$/);
    expect(r.json.error.message).not.toMatch(/Anthropic/);
  });

  it("counting a Claude model's tokens with an http image URL keeps Anthropic's rule in its words", async () => {
    const body = { model: CLAUDE, input: [{ role: "user", content: [{ type: "input_text", text: "what is this?" }, { type: "input_image", image_url: "http://images.example.com/cat.png" }] }] };
    const r = await postJson(`${gw.baseURL}/responses/input_tokens`, body, auth);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.message).toBe("input[0].content[1].image_url: Anthropic fetches only https image URLs; send an https URL or a base64 data URL");
  });
});

