// A grounded Gemini stream (web_search_options) whose upstream sends its whole answer, the last chunk carrying the
// finish reason, the sources and the usage, and then keeps the connection open without ending it. On the shipped
// gateway.yaml with google/gemini-2.5-flash on a fake, a short providers.gemini.timeout_ms and guardrails that mask
// keys in answers (so the answer's tail waits in the guardrails' window until the finish): the client must get the
// whole answer, its sources and (chat) finish_reason stop before the timeout's error, chat and Responses streamed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, SHIPPED_PROJECT, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { listenLoopback, readRequest, type Loopback } from "./upstreams/http-fake.ts";

const MODEL = "google/gemini-2.5-flash";
const SECRET = "AKIAIOSFODNN7EXAMPLE";
const ANSWER = `Paris is the capital. Its key ${SECRET} opens it. The rest of this answer is long enough to outlast the window.`;
/** The client's text: the key masked by the output rule. */
const CLIENT_TEXT = ANSWER.replace(SECRET, "[REDACTED:SECRET]");
const SOURCE = { type: "url_citation", url_citation: { start_index: 0, end_index: 21, url: "https://paris.example/", title: "paris.example" } };

let fake: Loopback;
const stalled: ServerResponse[] = [];
let gw: TestGateway;

beforeAll(async () => {
  fake = await listenLoopback(async (req, res) => {
    await readRequest(req);
    res.writeHead(200, { "content-type": "text/event-stream" });
    const pieces = ANSWER.match(/.{1,10}/g)!;
    pieces.forEach((text, i) => {
      const last = i === pieces.length - 1;
      const c = {
        index: 0, content: { role: "model", parts: [{ text }] },
        ...(last ? { finishReason: "STOP", groundingMetadata: { groundingChunks: [{ web: { uri: "https://paris.example/", title: "paris.example" } }], groundingSupports: [{ segment: { startIndex: 0, endIndex: 21 }, groundingChunkIndices: [0] }] } } : {}),
      };
      const usage = last ? { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 30, totalTokenCount: 35 } } : {};
      res.write(`data: ${JSON.stringify({ candidates: [c], ...usage, modelVersion: "gemini-2.5-flash" })}\r\n\r\n`);
    });
    // The answer is finished, but the upstream never ends the stream.
    stalled.push(res);
  });
  const config = shippedConfig({ openai: fake.origin, anthropic: fake.origin });
  config.providers.gemini.base_url = fake.origin;
  config.providers.gemini.timeout_ms = 1000;
  config.projects[SHIPPED_PROJECT].guardrails = { rules: [{ name: "sec", detect: ["secret"], on: ["output"], action: "redact" }] };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: "AIza-fake" } });
});

afterAll(async () => {
  for (const res of stalled) res.destroy();
  await gw?.close();
  await fake?.close();
});

/** A streamed request's events, read to the end the gateway gives it: [event name, data parsed]. */
async function events(path: string, body: unknown): Promise<[string | undefined, any][]> {
  const res = await fetch(`${gw.baseURL}${path}`, { method: "POST", headers: { authorization: `Bearer ${SHIPPED_KEY}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  const out: [string | undefined, any][] = [];
  for (const block of (await res.text()).split(/\n\n/)) {
    const name = block.match(/^event: (.*)$/m)?.[1];
    const data = block.match(/^data: (.*)$/m)?.[1];
    if (data && data !== "[DONE]") out.push([name, JSON.parse(data)]);
  }
  return out;
}

describe("a grounded Gemini stream whose upstream stalls after its finish", () => {
  it("chat: the whole answer, one delta.annotations and finish_reason stop, all before the error", async () => {
    const evs = (await events("/chat/completions", { model: MODEL, messages: [{ role: "user", content: "capital?" }], web_search_options: {}, stream: true })).map(([, d]) => d);
    const errorAt = evs.findIndex((d) => d.error);
    const answer = errorAt < 0 ? evs : evs.slice(0, errorAt);
    const choices = answer.flatMap((d) => d.choices ?? []);
    expect(choices.map((c) => c.delta?.content ?? "").join("")).toBe(CLIENT_TEXT);
    expect(choices.filter((c) => c.delta?.annotations).map((c) => c.delta.annotations)).toEqual([[SOURCE]]);
    expect(choices.at(-1)).toMatchObject({ finish_reason: "stop" });
  });

  it("Responses: the whole output_text and its source before the failure", async () => {
    const evs = await events("/responses", { model: MODEL, input: "capital?", tools: [{ type: "web_search" }], stream: true });
    const failedAt = evs.findIndex(([name]) => name === "error" || name === "response.failed");
    const answer = failedAt < 0 ? evs : evs.slice(0, failedAt);
    const text = answer.filter(([name]) => name === "response.output_text.delta").map(([, d]) => d.delta).join("");
    expect(text).toBe(CLIENT_TEXT);
    const added = answer.filter(([name]) => name === "response.output_text.annotation.added").map(([, d]) => d.annotation);
    expect(added).toEqual([{ type: "url_citation", start_index: 0, end_index: 21, url: "https://paris.example/", title: "paris.example" }]);
  });
});
