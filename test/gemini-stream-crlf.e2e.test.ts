// Gemini-protocol streams end every event with CRLF CRLF, as the real API does (reference §5: `data: <json>\r\n\r\n`).
// The answer's events went out ending in `\n\n` while the gateway's own error frame in the same stream ended in
// `\r\n\r\n`: a client that splits events the way the API frames them (on `\r\n\r\n`) got the whole answer as one
// unparseable event. The other protocols keep their `\n\n`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GoogleGenAI } from "@google/genai";
import type { FakeGemini } from "./upstreams/gemini.ts";
import type { FakeOpenAI } from "./upstreams/openai.ts";
import { testKey, type TestGateway } from "./helpers/gateway.ts";
import { startGeminiOpenAIGateway, type GeminiOpenAIGateway } from "./helpers/gemini-openai-gateway.ts";

const KEY = testKey("gemini-stream-crlf");
let gemini: FakeGemini;
let openai: FakeOpenAI;
let gw: TestGateway;
let setup: GeminiOpenAIGateway | undefined;

beforeAll(async () => {
  setup = await startGeminiOpenAIGateway(KEY);
  ({ gw, gemini, openai } = setup);
});

afterAll(async () => {
  await setup?.close();
});

const hi = { contents: [{ role: "user", parts: [{ text: "Hi" }] }] };

/** The raw bytes of a Gemini stream, read to the end (or the cut). */
async function geminiStreamBytes(model: string): Promise<string> {
  const res = await fetch(`${gw.url}/api/v1beta/models/${model}:streamGenerateContent?alt=sse`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": KEY },
    body: JSON.stringify(hi),
  });
  expect(res.status).toBe(200);
  const decoder = new TextDecoder();
  let text = "";
  try {
    for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(bytes, { stream: true });
  } catch {
    // A failed Gemini stream is cut after its error frame: the bytes before the cut are what is checked.
  }
  return text;
}

/** Events as a client that splits the way the API frames (on CRLF CRLF only) reads them. */
const crlfEvents = (wire: string) => wire.split("\r\n\r\n").filter((e) => e !== "").map((e) => {
  expect(e.startsWith("data: "), e).toBe(true);
  return JSON.parse(e.slice(6));
});

describe("Gemini stream framing", () => {
  it.each(["google/gem", "openai/gpt"])("%s: every event ends with CRLF CRLF and none with LF LF", async (model) => {
    const wire = await geminiStreamBytes(model);
    expect(wire.endsWith("\r\n\r\n")).toBe(true);
    expect(wire.replaceAll("\r\n\r\n", "")).not.toContain("\n\n");
    const events = crlfEvents(wire);
    expect(events.length).toBeGreaterThan(1);
    expect(events.at(-1).candidates[0].finishReason).toBe("STOP");
    expect(events.map((e) => e.candidates[0].content?.parts?.map((p: any) => p.text ?? "").join("") ?? "").join("")).toContain("Hello");
  });

  it("a stream that fails mid-way holds one terminator: the answer's events and the error frame end alike", async () => {
    openai.failures.push({ kind: "die-mid-stream", afterChunks: 3 });
    const wire = await geminiStreamBytes("openai/gpt");
    expect(wire.replaceAll("\r\n\r\n", "")).not.toContain("\n\n");
    const events = crlfEvents(wire);
    expect(events.length).toBeGreaterThan(1);
    expect(events.at(-1).error).toMatchObject({ code: expect.any(Number) });
    expect(events.slice(0, -1).every((e) => Array.isArray(e.candidates))).toBe(true);
  });

  it("@google/genai reads the CRLF-framed stream whole", async () => {
    const ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: `${gw.url}/api`, retryOptions: { attempts: 1 } } } as any);
    let text = "";
    for await (const chunk of await ai.models.generateContentStream({ model: "google/gem", contents: "Hi" })) text += chunk.text ?? "";
    expect(text).toContain("Hello");
  });

  it("a chat client's stream keeps its LF LF events", async () => {
    const res = await fetch(`${gw.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ model: "google/gem", stream: true, messages: [{ role: "user", content: "Hi" }] }),
    });
    const wire = await res.text();
    expect(wire).not.toContain("\r");
    expect(wire.endsWith("data: [DONE]\n\n")).toBe(true);
  });
});
