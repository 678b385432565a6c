// A model billing audio input above text (pricing.input_audio: Gemini 2.5 Flash $1.00 per million against $0.30) holds
// a request carrying audio at the audio price, its input being up to the context window (inline media, billed by
// what it shows): held at the text price, an audio request could settle at 3.3 times its hold. A request without
// audio, inline image included, is held at the text price as before.
import { describe, expect, it } from "vitest";
import { worstCase } from "./worst-case.ts";
import { picoToUsd } from "../../core/money/money.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";

const EARS = { input: "0.0000003", input_audio: "0.000001", output: "0.0000025" };

function ctx(endpoint: string, body: unknown, pricing: Record<string, string> = EARS): GatewayContext {
  const ep = { provider: "p", upstreamModel: "ears", pricing, maxTokens: 100, contextWindow: 1000 };
  const models = new Map<string, any>([["a/ears", { id: "a/ears", type: "language", config: {}, endpoints: [ep] }]]);
  return { endpoint, body, headers: { "content-length": "200" }, config: { models, raw: {} } } as unknown as GatewayContext;
}

/** The hold and its input share, in USD. */
const held = (c: GatewayContext) => {
  const w = worstCase(c);
  return { usd: picoToUsd(w.pico), input: picoToUsd(w.withoutOutputPico!) };
};

const chat = (part: unknown) => ({ model: "a/ears", max_tokens: 10, messages: [{ role: "user", content: [{ type: "text", text: "Transcribe" }, part] }] });
const gemini = (part: unknown) => ({ model: "a/ears", generationConfig: { maxOutputTokens: 10 }, contents: [{ role: "user", parts: [{ text: "Transcribe" }, part] }] });
const responses = (part: unknown) => ({ model: "a/ears", max_output_tokens: 10, input: [{ role: "user", content: [{ type: "input_text", text: "Transcribe" }, part] }] });

// 1000 tokens (the context window) at $1.00/M + 10 out at $2.50/M.
const AUDIO = { usd: "0.001025", input: "0.001" };
// The same 1000 tokens at the $0.30/M text price.
const TEXT = { usd: "0.000325", input: "0.0003" };

describe("the budget's hold for a request carrying audio", () => {
  it("holds its input at input_audio on every protocol that can carry audio", () => {
    const cases: [string, unknown][] = [
      ["chat", chat({ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } })],
      ["chat", chat({ type: "file", file: { file_data: "data:audio/mp3;base64,SUQz", filename: "a.mp3" } })],
      ["gemini", gemini({ inlineData: { mimeType: "audio/wav", data: "UklGRg==" } })],
      ["gemini", gemini({ fileData: { mimeType: "audio/mp3", fileUri: "gs://b/talk.mp3" } })],
      ["responses", responses({ type: "input_file", file_data: "data:audio/wav;base64,UklGRg==", filename: "a.wav" })],
    ];
    for (const [endpoint, body] of cases) expect(held(ctx(endpoint, body)), `${endpoint} ${JSON.stringify(body)}`).toEqual(AUDIO);
  });

  it("audio after an image is found: the image does not end the search", () => {
    const body = { model: "a/ears", max_tokens: 10, messages: [{ role: "user", content: [
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }, { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
    ] }] };
    expect(held(ctx("chat", body))).toEqual(AUDIO);
  });

  it("a request without audio, inline media of the same size included, is held at the text price", () => {
    expect(held(ctx("chat", chat({ type: "image_url", image_url: { url: "data:image/png;base64,UklGRg==" } })))).toEqual(TEXT);
    expect(held(ctx("gemini", gemini({ inlineData: { mimeType: "image/png", data: "UklGRg==" } })))).toEqual(TEXT);
    // Text only: its 200-byte body at $0.30/M, + 10 out.
    expect(held(ctx("chat", { model: "a/ears", max_tokens: 10, messages: [{ role: "user", content: "input_audio audio/wav" }] }))).toEqual({ usd: "0.000085", input: "0.00006" });
  });

  it("input it cannot see (media by URL or id, a continuation, cached content) is held at the audio price", () => {
    // A URL's content type is the server's (a Gemini upstream is sent what it serves as inlineData), and a stored
    // conversation or cached content may hold audio: either may be billed at $1.00/M.
    const cases: [string, unknown][] = [
      ["chat", chat({ type: "image_url", image_url: { url: "https://example.com/voice.mp3" } })],
      ["chat", chat({ type: "image_url", image_url: { url: "https://example.com/photo.png" } })],
      ["chat", chat({ type: "file", file: { file_id: "file-1" } })],
      ["responses", responses({ type: "input_file", file_url: "https://example.com/voice.mp3" })],
      ["responses", responses({ type: "input_image", image_url: "https://example.com/voice.mp3" })],
      ["responses", { model: "a/ears", max_output_tokens: 10, previous_response_id: "resp_1", input: "And now?" }],
      ["responses", { model: "a/ears", max_output_tokens: 10, conversation: "conv_1", input: "And now?" }],
      ["responses", { model: "a/ears", max_output_tokens: 10, prompt: { id: "pmpt_1" }, input: "And now?" }],
      ["gemini", gemini({ fileData: { mimeType: "image/png", fileUri: "https://example.com/voice.mp3" } })],
      ["gemini", { model: "a/ears", cachedContent: "cachedContents/c1", generationConfig: { maxOutputTokens: 10 }, contents: [{ role: "user", parts: [{ text: "And now?" }] }] }],
    ];
    for (const [endpoint, body] of cases) expect(held(ctx(endpoint, body)), `${endpoint} ${JSON.stringify(body)}`).toEqual(AUDIO);
  });

  it("server tools alone add text, held at the text price", () => {
    const search = { model: "a/ears", max_output_tokens: 10, tools: [{ type: "web_search" }], input: "News?" };
    // Each model call of the search loop re-reads its input: 11 context windows at $0.30/M, as with no audio price.
    expect(held(ctx("responses", search))).toEqual(held(ctx("responses", search, { input: "0.0000003", output: "0.0000025" })));
    expect(held(ctx("responses", search)).input).toBe("0.0033");
  });

  it("a model without input_audio holds audio at its input price, and input_audio below input never lowers the hold", () => {
    const audio = chat({ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } });
    expect(held(ctx("chat", audio, { input: "0.0000003", output: "0.0000025" }))).toEqual(TEXT);
    expect(held(ctx("chat", audio, { input: "0.0000003", input_audio: "0.0000001", output: "0.0000025" }))).toEqual(TEXT);
  });

  it("says which price its input is held at (a refusal names it): input_audio for audio or input out of sight, else the dearest text one", () => {
    const price = (c: GatewayContext) => { const p = worstCase(c).inputPrice!; return { perMillion: picoToUsd(p.pico * 1_000_000n), key: p.key }; };
    expect(price(ctx("chat", chat({ type: "image_url", image_url: { url: "https://example.com/photo.png" } })))).toEqual({ perMillion: "1", key: "input_audio" });
    expect(price(ctx("chat", chat({ type: "image_url", image_url: { url: "data:image/png;base64,UklGRg==" } })))).toEqual({ perMillion: "0.3", key: "input" });
    // Without an audio price, or with a cache write dearer than input (which part is written is unknown).
    expect(price(ctx("chat", chat({ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }), { input: "0.0000003", output: "0.0000025" }))).toEqual({ perMillion: "0.3", key: "input" });
    expect(price(ctx("chat", chat({ type: "text", text: "x" }), { input: "0.000003", input_cache_write: "0.00000375", input_cache_write_1h: "0.0000035", output: "0.000015" }))).toEqual({ perMillion: "3.75", key: "input_cache_write" });
  });
});
