// Audio input costs more than text on Gemini 2.5 Flash ($1.00 per million against $0.30), and a request carrying
// audio reserves input up to the context window (inline media is billed by what it shows). The budget held that
// input at the text price, so with $0.50 left an audio request was let through on a ~$0.38 hold though it may cost
// over $1.05; it now holds the input at the audio price and is refused up front, while a request of the same size
// carrying an image instead is still let through at the text price. On the shipped catalog, Gemini upstream faked.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_LIMITS } from "./helpers/shipped-config.ts";
import { startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "./helpers/https-loopback.ts";
import type { Resolver, UrlFetchOptions } from "../core/net/url-fetch.ts";

const FLASH = "google/gemini-2.5-flash";
const KEY = testKey("audio-half");
/** Four bytes of a WAV header, sent once as audio and once as an image: the two bodies are the same size. */
const DATA = "UklGRg==";

let upstreamCalls = 0;
let upstream: Server;
let gw: TestGateway;
/** img.test (a name in the test certificate): an https server answering audio/mpeg whatever the path (the gateway may fetch it; it must not). */
let voice: HttpsLoopback;
const resolver: Resolver = async (host) => (host === "img.test" ? [{ address: "127.0.0.1", family: 4 }] : []);

beforeAll(async () => {
  upstream = createServer((req, res) => {
    upstreamCalls++;
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, finishReason: "STOP", index: 0 }],
        usageMetadata: { promptTokenCount: 300, candidatesTokenCount: 1, totalTokenCount: 301 }, modelVersion: "gemini-2.5-flash", responseId: "r1",
      }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  voice = await startHttpsLoopback((_req, res) => void res.writeHead(200, { "content-type": "audio/mpeg" }).end(Buffer.alloc(64)));
  const config = shippedConfig({ openai: "http://127.0.0.1:9", anthropic: "http://127.0.0.1:9" });
  config.providers.gemini.base_url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  // Room for a context window of input at $0.30/M (~$0.31) and the output, not for one at $1.00/M (~$1.05).
  config.projects.half = { keys: [keyEntry("half", KEY)], allow_models: ["*"], budget: { usd: "0.5", period: "total" }, rate_limits: SHIPPED_LIMITS };
  config.server = { ...config.server, url_fetch: { allow_hosts: ["img.test"] } };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: "AIza-fake" } });
  Object.assign(gw.gateway.config.server.urlFetch as UrlFetchOptions, { resolver, ca: TEST_CERT });
});

afterAll(async () => {
  await gw?.close();
  await new Promise((r) => upstream?.close(r));
  await voice?.close();
});

const gemini = (part: unknown) => postJson(`${gw.url}/api/v1beta/models/${FLASH}:generateContent`,
  { contents: [{ role: "user", parts: [{ text: "What is this?" }, part] }], generationConfig: { maxOutputTokens: 5 } }, { "x-goog-api-key": KEY });
const chat = (part: unknown) => postJson(`${gw.url}/api/v1/chat/completions`,
  { model: FLASH, max_tokens: 5, messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, part] }] }, { authorization: `Bearer ${KEY}` });

/** A refusal's details: chat's object, or Gemini's ErrorInfo metadata (its values strings). */
function detailsOf(r: { json: any }) {
  const d = r.json.error.details;
  return Array.isArray(d) ? { ...d[0].metadata, reserved_input: JSON.parse(d[0].metadata.reserved_input) } : d;
}

/** The budget's refusal of a request whose input alone, at the audio price, is over what is left. */
function refusedForAudio(r: { status: number; json: any }, reserved = "inline_media") {
  expect(r.status).toBe(402);
  // The input: 1 048 576 tokens of context window at $1.00 per million (at the text price, $0.3145728).
  expect(detailsOf(r)).toMatchObject({ reason: "request_input_over_available", reserved_input: [reserved], budget_usd: "0.5", input_max_usd: "1.048576" });
  // The price that sum is made with, which is not the $0.30/M a user reads in the catalog as the model's input price.
  expect(detailsOf(r)).toMatchObject({ input_price_per_million: "1", input_price_key: "input_audio" });
  expect(r.json.error.message).toContain("reserved up to the model's context window at $1.00 per million tokens, its audio input price (input_audio)");
}

describe("a budget with room for a context window of text but not of audio", () => {
  it("refuses a Gemini client's inlineData audio up front, before the upstream is called", async () => {
    const before = upstreamCalls;
    const r = await gemini({ inlineData: { mimeType: "audio/wav", data: DATA } });
    refusedForAudio(r);
    expect(detailsOf(r).spent_usd).toBe("0");
    expect(upstreamCalls).toBe(before);
  });

  it("refuses a chat client's input_audio up front", async () => {
    const before = upstreamCalls;
    refusedForAudio(await chat({ type: "input_audio", input_audio: { data: DATA, format: "wav" } }));
    expect(upstreamCalls).toBe(before);
  });

  it("lets through the same request carrying an image instead, held at the text price", async () => {
    const before = upstreamCalls;
    const r = await gemini({ inlineData: { mimeType: "image/png", data: DATA } });
    expect(r.status).toBe(200);
    expect(upstreamCalls).toBe(before + 1);
  });
});

// What the gateway cannot see may be audio: a URL's content type is what its server says (the chat→Gemini
// translator sends a .mp3 as audio/mp3, the downloader sends what it serves as inlineData of that type), and a
// stored conversation is rebuilt after the budget ran. Held at the text price, either was let through and billed at
// $1.00/M; it is now held at the audio price.
describe("input the gateway cannot see, on a budget with room for a context window of text but not of audio", () => {
  const voiceUrl = () => `https://img.test:${voice.port}/voice.mp3`;
  /** An inline image as long as the URL: the two bodies are the same size. */
  const pngData = () => "data:image/png;base64," + "A".repeat(voiceUrl().length - "data:image/png;base64,".length);
  const responses = (body: Record<string, unknown>) =>
    postJson(`${gw.url}/api/v1/responses`, { model: FLASH, max_output_tokens: 5, ...body }, { authorization: `Bearer ${KEY}` });

  it("refuses a chat image_url naming an https .mp3 up front, before it is downloaded or the upstream is called", async () => {
    const before = upstreamCalls;
    refusedForAudio(await chat({ type: "image_url", image_url: { url: voiceUrl() } }), "media_by_reference");
    expect(voice.requests).toEqual([]);
    expect(upstreamCalls).toBe(before);
  });

  it("refuses a chat image_url naming an https .png, saying the audio price its input is held at", async () => {
    const before = upstreamCalls;
    refusedForAudio(await chat({ type: "image_url", image_url: { url: `https://img.test:${voice.port}/cat.png` } }), "media_by_reference");
    expect(upstreamCalls).toBe(before);
  });

  it("refuses a Responses continuation (previous_response_id) up front", async () => {
    const first = await responses({ input: "Transcribe the call I sent." });
    expect(first.status).toBe(200);
    const before = upstreamCalls;
    refusedForAudio(await responses({ previous_response_id: first.json.id, input: "And what did they say next?" }), "stored_conversation");
    expect(upstreamCalls).toBe(before);
  });

  it("lets through a chat image_url carrying an inline image of the same size, and a text-only request", async () => {
    expect(pngData().length).toBe(voiceUrl().length);
    const before = upstreamCalls;
    expect((await chat({ type: "image_url", image_url: { url: pngData() } })).status).toBe(200);
    expect((await chat({ type: "text", text: "Say ok." })).status).toBe(200);
    expect(upstreamCalls).toBe(before + 2);
  });
});
