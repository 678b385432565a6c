// A grounded answer's sources (url_citation annotations) through a project whose guardrails redact: the email the
// client sent leaves as [EMAIL_1] and comes back restored, a secret the model writes is masked, so the client's text
// is not the upstream's and the annotations' indexes must be moved to where the cited text is in the client's. On the
// shipped gateway.yaml with guardrails added to its project and Gemini (google/gemini-2.5-flash) answering from a fake
// that echoes the placeholder and grounds three spans: a sentence after the restored email, a sentence holding the
// masked secret, and a span inside the secret (clamped to the mask). Chat and Responses, JSON and stream, read with
// the official openai SDK; in a stream the sources come only after the text they cite.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, SHIPPED_PROJECT, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { answerGrounded } from "./upstreams/gemini-grounded.ts";
import { listenLoopback, readRequest, type Loopback, type Recorded } from "./upstreams/http-fake.ts";

const MODEL = "google/gemini-2.5-flash";
const EMAIL = "bob.smith@example.com";
const SECRET = "AKIAIOSFODNN7EXAMPLE";
/** The fake's answer: it writes back the placeholder the question reached it with. */
const UPSTREAM = `Write to [EMAIL_1]. Paris is the capital. Its key ${SECRET} opens it.`;
const CAPITAL = "Paris is the capital.";
const KEY = `Its key ${SECRET} opens it.`;
/** Byte spans (ASCII: bytes are characters) the fake grounds, by source. */
const SPANS: [string, number, number][] = [
  ["https://paris.example/", UPSTREAM.indexOf(CAPITAL), UPSTREAM.indexOf(CAPITAL) + CAPITAL.length],
  ["https://key.example/", UPSTREAM.indexOf(KEY), UPSTREAM.indexOf(KEY) + KEY.length],
  ["https://inside.example/", UPSTREAM.indexOf(SECRET) + 4, UPSTREAM.indexOf(SECRET) + 12],
];
const grounding = {
  groundingChunks: SPANS.map(([uri]) => ({ web: { uri, title: new URL(uri).host } })),
  groundingSupports: SPANS.map(([, startIndex, endIndex], i) => ({ segment: { startIndex, endIndex }, groundingChunkIndices: [i] })),
};

let fake: Loopback;
const requests: Recorded[] = [];
let gw: TestGateway;
let oai: OpenAI;

beforeAll(async () => {
  fake = await listenLoopback(async (req, res) => {
    const r = await readRequest(req);
    requests.push(r);
    answerGrounded(res, r.path, UPSTREAM, grounding);
  });
  const config = shippedConfig({ openai: fake.origin, anthropic: fake.origin });
  config.providers.gemini.base_url = fake.origin;
  config.projects[SHIPPED_PROJECT].guardrails = {
    rules: [{ name: "pii", detect: ["email"], action: "redact" }, { name: "sec", detect: ["secret"], on: ["output"], action: "redact" }],
  };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: "AIza-fake" } });
  oai = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const question = `my mail is ${EMAIL}, cite`;

/** The client's text: the email restored, the secret masked. */
function expectClientText(text: string): string {
  expect(text.startsWith(`Write to ${EMAIL}. ${CAPITAL} Its key [REDACTED:`)).toBe(true);
  expect(text).not.toContain(SECRET);
  expect(requests.at(-1)!.raw.toString()).toContain("[EMAIL_1]");
  return text;
}

/** Where each source must point in the client's text: the sentences as the client reads them, the mask for the span inside it. */
function expectedSpans(text: string): [string, number, number][] {
  const mask = text.match(/\[REDACTED:[A-Z_]+\]/)![0];
  const key = `Its key ${mask} opens it.`;
  return [
    ["https://paris.example/", text.indexOf(CAPITAL), text.indexOf(CAPITAL) + CAPITAL.length],
    ["https://key.example/", text.indexOf(key), text.indexOf(key) + key.length],
    ["https://inside.example/", text.indexOf(mask), text.indexOf(mask) + mask.length],
  ];
}

const chatSpans = (annotations: any[]) => annotations.map((a) => [a.url_citation.url, a.url_citation.start_index, a.url_citation.end_index]);
const responsesSpans = (annotations: any[]) => annotations.map((a) => [a.url, a.start_index, a.end_index]);

describe("url_citation annotations through guardrails that redact", () => {
  const chat = { model: MODEL, messages: [{ role: "user" as const, content: question }], web_search_options: {} };
  const responses = { model: MODEL, input: question, tools: [{ type: "web_search" as const }] };

  it("chat JSON: each annotation spans the cited text in the content the client got", async () => {
    const c = await oai.chat.completions.create(chat);
    const msg: any = c.choices[0]!.message;
    const text = expectClientText(msg.content);
    expect(chatSpans(msg.annotations)).toEqual(expectedSpans(text));
  });

  it("chat stream: the annotations come after the text they cite, at its place in the content", async () => {
    const stream = await oai.chat.completions.create({ ...chat, stream: true });
    let content = "";
    const batches: { annotations: any[]; sentBefore: number }[] = [];
    for await (const chunk of stream) {
      const d: any = chunk.choices[0]?.delta ?? {};
      if (typeof d.content === "string") content += d.content;
      if (d.annotations) batches.push({ annotations: d.annotations, sentBefore: content.length });
    }
    const text = expectClientText(content);
    expect(batches).toHaveLength(1);
    expect(chatSpans(batches[0]!.annotations)).toEqual(expectedSpans(text));
    expect(batches[0]!.sentBefore).toBeGreaterThanOrEqual(Math.max(...expectedSpans(text).map(([, , e]) => e)));
  });

  it("Responses JSON: the output_text's annotations span the cited text", async () => {
    const r: any = await oai.responses.create(responses);
    const part = r.output.find((o: any) => o.type === "message").content[0];
    const text = expectClientText(part.text);
    expect(responsesSpans(part.annotations)).toEqual(expectedSpans(text));
  });

  it("Responses stream: each annotation.added follows the text it cites; the final response carries the same", async () => {
    const stream = await oai.responses.create({ ...responses, stream: true });
    let text = "";
    const added: { annotation: any; sentBefore: number }[] = [];
    let final: any;
    for await (const e of stream as AsyncIterable<any>) {
      if (e.type === "response.output_text.delta") text += e.delta;
      if (e.type === "response.output_text.annotation.added") added.push({ annotation: e.annotation, sentBefore: text.length });
      if (e.type === "response.completed") final = e.response;
    }
    expectClientText(text);
    const want = expectedSpans(text);
    expect(responsesSpans(added.map((a) => a.annotation))).toEqual(want);
    for (const [i, a] of added.entries()) expect(a.sentBefore).toBeGreaterThanOrEqual(want[i]![2]);
    const part = final.output.find((o: any) => o.type === "message").content[0];
    expect(part.text).toBe(text);
    expect(responsesSpans(part.annotations)).toEqual(want);
  });
});
