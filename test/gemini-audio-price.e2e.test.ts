// Audio input to Gemini is billed at the model's audio price (pricing.input_audio), not its text price: Gemini 2.5
// Flash bills audio at $1.00 per million input tokens against $0.30 for text, and cached audio at $0.10 against $0.03.
// The upstream says how much of the prompt was audio (usageMetadata.promptTokensDetails, cacheTokensDetails); the
// ledger record and x-mg-cost-usd bill those tokens at the audio prices, the rest at the text prices — for a Gemini
// client (inlineData audio) and a chat client (input_audio, translated to Gemini) alike, on the shipped catalog.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ledgerRecordOf, postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, SHIPPED_KEY, shippedConfig } from "./helpers/shipped-config.ts";

const FLASH = "google/gemini-2.5-flash";
const WAV = Buffer.from("RIFF\u0000\u0000\u0000\u0000WAVEfmt ").toString("base64");

/** What the fake Gemini reports as the answer's usageMetadata (each test sets its own). */
let usageMetadata: Record<string, unknown> = {};
let upstream: Server;
let gw: TestGateway;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        candidates: [{ content: { role: "model", parts: [{ text: "heard it" }] }, finishReason: "STOP", index: 0 }],
        usageMetadata, modelVersion: "gemini-2.5-flash", responseId: "r1",
      }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const config = shippedConfig({ openai: "http://127.0.0.1:9", anthropic: "http://127.0.0.1:9" });
  config.providers.gemini.base_url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: "AIza-fake" } });
});

afterAll(async () => {
  await gw?.close();
  await new Promise((r) => upstream?.close(r));
});

const AUDIO_PROMPT = {
  promptTokenCount: 100_000, candidatesTokenCount: 20, totalTokenCount: 100_020,
  promptTokensDetails: [{ modality: "AUDIO", tokenCount: 99_990 }, { modality: "TEXT", tokenCount: 10 }],
};
// 99 990 audio tokens at $1.00/M + 10 text tokens at $0.30/M + 20 output tokens at $2.50/M (not 0.03005, all at $0.30/M).
const AUDIO_COST = "0.100043";

const gemini = (body: unknown) => postJson(`${gw.url}/api/v1beta/models/${FLASH}:generateContent`, body, { "x-goog-api-key": SHIPPED_KEY });
const chat = (body: unknown) => postJson(`${gw.url}/api/v1/chat/completions`, body, { authorization: `Bearer ${SHIPPED_KEY}` });

describe("audio input to Gemini 2.5 Flash is billed at its audio price", () => {
  it("a Gemini client's inlineData audio: the ledger and x-mg-cost-usd bill the audio tokens at $1.00 per million", async () => {
    usageMetadata = AUDIO_PROMPT;
    const r = await gemini({ contents: [{ role: "user", parts: [{ text: "transcribe" }, { inlineData: { mimeType: "audio/wav", data: WAV } }] }] });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-mg-cost-usd")).toBe(AUDIO_COST);
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.costUsd).toBe(AUDIO_COST);
    expect(record.inputTokens).toBe(100_000);
  });

  it("a chat client's input_audio (translated to Gemini): billed the same", async () => {
    usageMetadata = AUDIO_PROMPT;
    const r = await chat({ model: FLASH, messages: [{ role: "user", content: [{ type: "text", text: "transcribe" }, { type: "input_audio", input_audio: { data: WAV, format: "wav" } }] }] });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-mg-cost-usd")).toBe(AUDIO_COST);
    const record = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(record.costUsd).toBe(AUDIO_COST);
  });

  it("audio read from the context cache is billed at the cached-audio price ($0.10 per million)", async () => {
    usageMetadata = {
      ...AUDIO_PROMPT, cachedContentTokenCount: 60_000,
      cacheTokensDetails: [{ modality: "AUDIO", tokenCount: 60_000 }],
    };
    const r = await gemini({ contents: [{ role: "user", parts: [{ text: "transcribe" }, { inlineData: { mimeType: "audio/wav", data: WAV } }] }] });
    expect(r.status).toBe(200);
    // 39 990 uncached audio at $1.00/M + 10 text at $0.30/M + 60 000 cached audio at $0.10/M + 20 output at $2.50/M.
    expect(r.headers.get("x-mg-cost-usd")).toBe("0.046043");
    expect((await ledgerRecordOf(gw, r.headers.get("x-request-id"))).costUsd).toBe("0.046043");
  });

  it("a text-only prompt stays at the text price", async () => {
    usageMetadata = { promptTokenCount: 1000, candidatesTokenCount: 20, totalTokenCount: 1020, promptTokensDetails: [{ modality: "TEXT", tokenCount: 1000 }] };
    const r = await gemini({ contents: [{ role: "user", parts: [{ text: "hello" }] }] });
    expect(r.headers.get("x-mg-cost-usd")).toBe("0.00035"); // 1000 x $0.30/M + 20 x $2.50/M
  });
});
