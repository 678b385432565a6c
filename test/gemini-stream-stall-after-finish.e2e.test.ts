// A Gemini stream whose upstream sends the whole answer, the last chunk carrying the finish reason (and, grounded,
// the sources), perhaps a usage-only chunk, and then keeps the connection open without ending it. Gemini sends no end
// marker, so that stall is all that is left of the stream. On the shipped gateway.yaml with google/gemini-2.5-flash on
// a fake and a short providers.gemini.timeout_ms: the client's stream ends as a complete one (chat: the usage chunk,
// then [DONE]; Responses: response.completed), the request is billed ok, and five such stalls leave the endpoint's
// circuit closed. With n: 2 (a Gemini client's candidateCount: 2) and only the first choice finished, the second is
// still owed: a stall or a break there stays the upstream failure it is.
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
  // finish, [m:plain] the same answer with its usage, ended; [m:n2stall] and [m:n2break] only candidate 0, finished,
  // with its usage, then a stall or a broken connection.
  fake = await listenLoopback(async (req, res) => {
    const mode = (await readRequest(req)).raw.toString().match(/\[m:(\w+)\]/)?.[1] ?? "plain";
    res.writeHead(200, { "content-type": "text/event-stream" });
    const write = (o: unknown) => res.write(`data: ${JSON.stringify({ modelVersion: "gemini-2.5-flash", ...(o as object) })}\r\n\r\n`);
    if (mode.startsWith("n2")) {
      write({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: ANSWER }] }, finishReason: "STOP" }], usageMetadata });
      if (mode === "n2break") return void setImmediate(() => res.destroy());
      return void stalled.push(res);
    }
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
    // The usage chunk claims no figures: the ledger bills an estimate, not the 0 tokens it once said.
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(chunks.at(-1)?.usage).toBeNull();
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

  it("chat n: 2 with only choice 0 finished: a stall or a break is the upstream error, no [DONE], not an ok record", async () => {
    for (const mode of ["n2stall", "n2break"]) {
      const { data: stream, response } = await client().chat.completions.create({
        model: MODEL, n: 2, messages: [{ role: "user", content: `capital? [m:${mode}]` }], stream: true, stream_options: { include_usage: true },
      }).withResponse();
      const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
      const failed = await (async () => { for await (const c of stream) chunks.push(c); })().then(() => undefined, (e) => e);
      expect(failed, mode).toBeDefined(); // the SDK raised on the error event
      expect(chunks.filter((c) => c.usage)).toEqual([]);
      const record = await ledgerRecordOf(gw, response.headers.get("x-request-id"));
      expect(record.outcome, mode).toBe("stream_error");
    }
  });

  it("a Gemini client's candidateCount: 2 with only candidate 0 finished: the stream ends with an error, not as at EOF", async () => {
    const res = await fetch(`${gw.url}/api/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, {
      method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": SHIPPED_KEY },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "capital? [m:n2stall]" }] }], generationConfig: { candidateCount: 2 } }),
    });
    // The gateway cuts the connection after the error event (docs/gemini.md): read what came before the cut.
    let body = "";
    const decoder = new TextDecoder();
    const reader = res.body!.getReader();
    try {
      for (let r = await reader.read(); !r.done; r = await reader.read()) body += decoder.decode(r.value, { stream: true });
    } catch { /* the cut */ }
    const events = body.split(/\r?\n\r?\n/).filter(Boolean).map((e) => JSON.parse(e.replace(/^data: /, "")));
    expect(events[0].candidates[0]).toMatchObject({ index: 0, finishReason: "STOP" });
    expect(events.at(-1)).toMatchObject({ error: { code: 504 } });
    expect((await ledgerRecordOf(gw, res.headers.get("x-request-id"))).outcome).toBe("stream_error");
  });

  it("five stalls leave the circuit closed: the next request is answered", async () => {
    // Settled whichever way they end: what is checked here is the circuit the sixth request meets.
    await Promise.allSettled(Array.from({ length: 5 }, () => chat("stall")));
    const { chunks } = await chat("plain");
    expect(chunks.flatMap((c) => c.choices).map((c) => c.delta?.content ?? "").join("")).toBe(ANSWER);
  });
});
