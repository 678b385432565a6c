// A cached stream read by the official clients: the openai SDK's chat stream and Responses stream, the Anthropic SDK's
// messages.stream and @google/genai's generateContentStream each read a replayed answer exactly as they read the live
// one (same text, same finish, same usage), without the upstream being called again. Caching is opted into by the
// project (mode: always) and, for one client, by providerOptions in the request body the SDK sends.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeCohere, type Reranker } from "./upstreams/rerankers.ts";
import { CACHE_ALWAYS, CACHE_KEY, CHAT_MODEL, cacheConfig, optIn } from "./helpers/cache-config.ts";
import { readResponseStream } from "./helpers/responses-fixtures.ts";

let openai: FakeOpenAI;
let cohere: Reranker;
let gw: TestGateway;
/** x-mg-cache of every answer the SDKs received, in order. */
const verdicts: (string | null)[] = [];
const recording: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  verdicts.push(res.headers.get("x-mg-cache"));
  return res;
};

beforeAll(async () => {
  openai = await startFakeOpenAI({ text: "Cached answers replay as the same stream, chunk after chunk.", chunkDelayMs: 1 });
  cohere = await startFakeCohere();
  gw = await startTestGateway(cacheConfig({ openai: openai.baseUrl, cohere: cohere.baseUrl, dir: mkdtempSync(join(tmpdir(), "mg-cache-sdk-")) }));
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await cohere?.close();
});

/** Runs `read` twice: the first reaches the upstream (miss), the second is answered from the cache (hit). */
async function twice<T>(read: () => Promise<T>): Promise<[T, T]> {
  const before = openai.requests.length;
  verdicts.length = 0;
  const first = await read();
  const second = await read();
  expect(openai.requests.length).toBe(before + 1);
  return [first, second];
}

describe("official clients read a replayed stream", () => {
  const oa = (key = CACHE_ALWAYS) => new OpenAI({ apiKey: key, baseURL: gw.baseURL, maxRetries: 0, fetch: recording });

  it("openai chat.completions stream (include_usage), opted in through the request body", async () => {
    const read = async () => {
      const stream = await oa(CACHE_KEY).chat.completions.create({
        model: CHAT_MODEL, max_tokens: 50, stream: true, stream_options: { include_usage: true },
        messages: [{ role: "user", content: "Tell me about caches" }],
        ...(optIn({ ttl: 300 }) as object),
      } as OpenAI.ChatCompletionCreateParamsStreaming);
      let text = "";
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | undefined;
      let chunks = 0;
      for await (const c of stream) {
        chunks++;
        text += c.choices[0]?.delta?.content ?? "";
        finish = c.choices[0]?.finish_reason ?? finish;
        usage = c.usage ?? usage;
      }
      return { text, finish, usage, chunks };
    };
    const [live, replayed] = await twice(read);
    expect(verdicts).toEqual(["miss", "hit"]);
    expect(live.text).toBe("Cached answers replay as the same stream, chunk after chunk.");
    expect(replayed).toEqual(live);
    expect(replayed.chunks).toBeGreaterThan(5);
  });

  it("openai responses.stream: the same events in order, the same final response", async () => {
    const read = () => readResponseStream(oa().responses.stream({ model: CHAT_MODEL, input: "Tell me about response caches", max_output_tokens: 50 }));
    const [live, replayed] = await twice(read);
    expect(verdicts).toEqual(["miss", "hit"]);
    expect(live.types.at(-1)).toBe("response.completed");
    expect(replayed.types).toEqual(live.types);
    expect(replayed.deltas).toBe(live.deltas);
    expect(replayed.final.output_text).toBe(live.final.output_text);
    expect(replayed.final.id).toBe(live.final.id);
  });

  it("anthropic messages.stream: finalMessage() and the text events are the live ones", async () => {
    const client = new Anthropic({ apiKey: CACHE_ALWAYS, baseURL: `${gw.url}/api`, maxRetries: 0, fetch: recording });
    const read = async () => {
      const stream = client.messages.stream({ model: CHAT_MODEL, max_tokens: 50, messages: [{ role: "user", content: "Tell me about message caches" }] });
      let text = "";
      stream.on("text", (t) => { text += t; });
      const final = await stream.finalMessage();
      return { text, final };
    };
    const [live, replayed] = await twice(read);
    expect(verdicts).toEqual(["miss", "hit"]);
    expect(live.text.length).toBeGreaterThan(0);
    expect(replayed.text).toBe(live.text);
    expect(replayed.final).toEqual(live.final);
    expect(replayed.final.stop_reason).toBe("end_turn");
  });

  it("@google/genai generateContentStream", async () => {
    const ai = new GoogleGenAI({ apiKey: CACHE_ALWAYS, httpOptions: { baseUrl: `${gw.url}/api`, retryOptions: { attempts: 1 } } });
    const read = async () => {
      let text = "";
      let finish: string | undefined;
      for await (const chunk of await ai.models.generateContentStream({ model: CHAT_MODEL, contents: "Tell me about Gemini caches" })) {
        text += chunk.text ?? "";
        finish = chunk.candidates?.[0]?.finishReason ?? finish;
      }
      return { text, finish };
    };
    const [live, replayed] = await twice(read);
    expect(live.text.length).toBeGreaterThan(0);
    expect(live.finish).toBe("STOP");
    expect(replayed).toEqual(live);
  });
});
