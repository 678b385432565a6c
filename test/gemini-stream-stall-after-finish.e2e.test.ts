// A Gemini stream whose upstream sends the whole answer, the last chunk carrying the finish reason (and, grounded,
// the sources), perhaps a usage-only chunk, and then keeps the connection open without ending it. Gemini sends no end
// marker, so that stall is all that is left of the stream. On the shipped gateway.yaml with google/gemini-2.5-flash on
// a fake and a short providers.gemini.timeout_ms: the client's stream ends as a complete one (chat: the usage chunk,
// then [DONE]; Responses: response.completed), the request is billed ok, and five such stalls leave the endpoint's
// circuit closed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import OpenAI from "openai";
import { ledgerRecordOf, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { listenLoopback, readRequest, type Loopback } from "./upstreams/http-fake.ts";

const MODEL = "google/gemini-2.5-flash";
const ANSWER = "Paris is the capital. It has many museums and a long history worth reading about.";
const usageMetadata = { promptTokenCount: 5, candidatesTokenCount: 30, totalTokenCount: 35 };
const grounding = { groundingChunks: [{ web: { uri: "https://paris.example/", title: "paris.example" } }], groundingSupports: [{ segment: { startIndex: 0, endIndex: 21 }, groundingChunkIndices: [0] }] };

let fake: Loopback;
const stalled: ServerResponse[] = [];
let gw: TestGateway;

beforeAll(async () => {
  // The prompt says how the fake answers: [m:stall] no usage at all, [m:stallusage] a usage-only chunk after the
  // finish, [m:plain] the same answer with its usage, ended.
  fake = await listenLoopback(async (req, res) => {
    const mode = (await readRequest(req)).raw.toString().match(/\[m:(\w+)\]/)?.[1] ?? "plain";
    res.writeHead(200, { "content-type": "text/event-stream" });
    const write = (o: unknown) => res.write(`data: ${JSON.stringify({ modelVersion: "gemini-2.5-flash", ...(o as object) })}\r\n\r\n`);
    const pieces = ANSWER.match(/.{1,10}/g)!;
    pieces.forEach((text, i) => {
      const last = i === pieces.length - 1;
      write({ candidates: [{ index: 0, content: { role: "model", parts: [{ text }] }, ...(last ? { finishReason: "STOP", groundingMetadata: grounding } : {}) }], ...(last && mode === "plain" ? { usageMetadata } : {}) });
    });
    if (mode === "plain") return void res.end();
    if (mode === "stallusage") write({ usageMetadata });
    stalled.push(res); // never ended
  });
  const config = shippedConfig({ openai: fake.origin, anthropic: fake.origin });
  config.providers.gemini.base_url = fake.origin;
  config.providers.gemini.timeout_ms = 1000;
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: "AIza-fake" } });
});

afterAll(async () => {
  for (const res of stalled) res.destroy();
  await gw?.close();
  await fake?.close();
});

const client = () => new OpenAI({ baseURL: gw.baseURL, apiKey: SHIPPED_KEY, maxRetries: 0 });

/** A streamed chat request through the openai SDK: its chunks (it raises on an error event) and its request id. */
async function chat(mode: string) {
  const { data: stream, response } = await client().chat.completions.create({
    model: MODEL, messages: [{ role: "user", content: `capital? [m:${mode}]` }], stream: true,
    stream_options: { include_usage: true }, web_search_options: {},
  }).withResponse();
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  return { chunks, requestId: response.headers.get("x-request-id") };
}

describe("a Gemini stream whose upstream stalls after every candidate finished", () => {
  it("chat: the whole answer, its source, finish_reason stop, the upstream's usage chunk, and an ok record", async () => {
    const { chunks, requestId } = await chat("stallusage");
    const choices = chunks.flatMap((c) => c.choices);
    expect(choices.map((c) => c.delta?.content ?? "").join("")).toBe(ANSWER);
    expect(choices.filter((c) => (c.delta as any)?.annotations).length).toBe(1);
    expect(choices.at(-1)?.finish_reason).toBe("stop");
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 30 } });
    const record = await ledgerRecordOf(gw, requestId);
    expect(record).toMatchObject({ outcome: "ok", estimated: false, inputTokens: 5, outputTokens: 30 });
  });

  it("chat without any usage from the upstream: ends the same way, billed at the estimate as any answer without usage", async () => {
    const { chunks, requestId } = await chat("stall");
    expect(chunks.flatMap((c) => c.choices).at(-1)?.finish_reason).toBe("stop");
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(chunks.at(-1)?.usage).toBeDefined();
    const record = await ledgerRecordOf(gw, requestId);
    expect(record).toMatchObject({ outcome: "ok", estimated: true });
    expect(record.outputTokens).toBeGreaterThan(0);
  });

  it("Responses: response.completed with the whole output_text, its source and the upstream's usage", async () => {
    const stream = await client().responses.create({ model: MODEL, input: "capital? [m:stallusage]", tools: [{ type: "web_search" } as any], stream: true });
    const types: string[] = [];
    let completed: any;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === "response.completed") completed = ev.response;
    }
    expect(types).not.toContain("response.failed");
    expect(types).not.toContain("error");
    expect(types.at(-1)).toBe("response.completed");
    const message = completed.output.find((o: any) => o.type === "message");
    expect(message.content[0]).toMatchObject({ type: "output_text", text: ANSWER, annotations: [{ type: "url_citation", url: "https://paris.example/" }] });
    expect(completed.usage).toMatchObject({ input_tokens: 5, output_tokens: 30 });
  });

  it("five stalls leave the circuit closed: the next request is answered", async () => {
    // Settled whichever way they end: what is checked here is the circuit the sixth request meets.
    await Promise.allSettled(Array.from({ length: 5 }, () => chat("stall")));
    const { chunks } = await chat("plain");
    expect(chunks.flatMap((c) => c.choices).map((c) => c.delta?.content ?? "").join("")).toBe(ANSWER);
  });
});
