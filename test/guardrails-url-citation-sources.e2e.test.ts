// A grounded answer's sources carry text of their own: each url_citation's title and url. On the shipped gateway.yaml
// with guardrails added to its project (emails redacted in requests, secrets masked in answers, a block rule on a word)
// and Gemini (google/gemini-2.5-flash) answering from a fake whose grounding chunk names an address and a key in its
// title and url, and echoes the placeholder the client's own email left as: the client must find the source's title
// and url checked as the answer's text is, in chat and Responses, JSON and stream (read with the official openai SDK):
// masked, the client's email restored, and the answer refused when the block rule's word is only in a source's title.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, SHIPPED_PROJECT, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { answerGrounded } from "./upstreams/gemini-grounded.ts";
import { listenLoopback, readRequest, type Loopback } from "./upstreams/http-fake.ts";

const MODEL = "google/gemini-2.5-flash";
const CLIENT_EMAIL = "bob.smith@example.com";
const MODEL_EMAIL = "carol@corp.example";
const SECRET = "AKIAIOSFODNN7EXAMPLE";
const ANSWER = "Paris is the capital. It has many museums.";
/** What the fake's source says: a key, and the placeholder the client's email reached it as (and an address of its own). */
const leakySource = (placeholder: string, banned: boolean) => ({
  uri: `https://x.example/?u=${MODEL_EMAIL}&k=${SECRET}&to=${placeholder}`,
  title: `contact ${MODEL_EMAIL} ${SECRET} for ${placeholder}${banned ? " falcon-launch plans" : ""}`,
});

let fake: Loopback;
let gw: TestGateway;
let oai: OpenAI;

beforeAll(async () => {
  fake = await listenLoopback(async (req, res) => {
    const r = await readRequest(req);
    const raw = r.raw.toString();
    const placeholder = raw.match(/\[EMAIL_\d+\]/)?.[0] ?? "nobody";
    const grounding = {
      groundingChunks: [{ web: leakySource(placeholder, raw.includes("plans")) }],
      groundingSupports: [{ segment: { startIndex: 0, endIndex: 21 }, groundingChunkIndices: [0] }],
    };
    answerGrounded(res, r.path, ANSWER, grounding);
  });
  const config = shippedConfig({ openai: fake.origin, anthropic: fake.origin });
  config.providers.gemini.base_url = fake.origin;
  config.projects[SHIPPED_PROJECT].guardrails = {
    rules: [
      { name: "pii", detect: ["email"], action: "redact" },
      { name: "sec", detect: ["secret"], on: ["output"], action: "redact" },
      { name: "no-launch", patterns: ["falcon-launch"], on: ["output"], action: "block" },
    ],
  };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: "AIza-fake" } });
  oai = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

/**
 * The source as the client must see it: the key masked, the client's own email restored (the email rule is on
 * requests only, so the model's address stays); the url's mask percent-encoded, so it still parses.
 */
function expectCheckedSource(source: { url: string; title: string }): void {
  expect(source.title).toBe(`contact ${MODEL_EMAIL} [REDACTED:SECRET] for ${CLIENT_EMAIL}`);
  expect(source.url).toBe(`https://x.example/?u=${MODEL_EMAIL}&k=%5BREDACTED:SECRET%5D&to=${CLIENT_EMAIL}`);
}

const chatBody = (q: string) => ({ model: MODEL, messages: [{ role: "user" as const, content: q }], web_search_options: {} });
const responsesBody = (q: string) => ({ model: MODEL, input: q, tools: [{ type: "web_search" as const }] });
const QUESTION = `my mail is ${CLIENT_EMAIL}, cite`;
const BANNED = `my mail is ${CLIENT_EMAIL}, tell me the plans`;

describe("url_citation titles and urls through the output rules", () => {
  it("chat JSON: message.annotations' title and url masked, the client's email restored", async () => {
    const c: any = await oai.chat.completions.create(chatBody(QUESTION));
    const msg = c.choices[0].message;
    expect(msg.content).toBe(ANSWER);
    expect(msg.annotations).toHaveLength(1);
    expectCheckedSource(msg.annotations[0].url_citation);
  });

  it("chat stream: delta.annotations' title and url masked, the client's email restored", async () => {
    const stream = await oai.chat.completions.create({ ...chatBody(QUESTION), stream: true });
    let content = "";
    const annotations: any[] = [];
    for await (const chunk of stream) {
      const d: any = chunk.choices[0]?.delta ?? {};
      if (typeof d.content === "string") content += d.content;
      if (d.annotations) annotations.push(...d.annotations);
    }
    expect(content).toBe(ANSWER);
    expect(annotations).toHaveLength(1);
    expectCheckedSource(annotations[0].url_citation);
  });

  it("Responses JSON: the output_text annotation's title and url masked, the client's email restored", async () => {
    const r: any = await oai.responses.create(responsesBody(QUESTION));
    const part = r.output.find((o: any) => o.type === "message").content[0];
    expect(part.text).toBe(ANSWER);
    expect(part.annotations).toHaveLength(1);
    expectCheckedSource(part.annotations[0]);
  });

  it("Responses stream: annotation.added and the final response carry the checked title and url", async () => {
    const stream = await oai.responses.create({ ...responsesBody(QUESTION), stream: true });
    const added: any[] = [];
    let final: any;
    for await (const e of stream as AsyncIterable<any>) {
      if (e.type === "response.output_text.annotation.added") added.push(e.annotation);
      if (e.type === "response.completed") final = e.response;
    }
    expect(added).toHaveLength(1);
    expectCheckedSource(added[0]);
    const part = final.output.find((o: any) => o.type === "message").content[0];
    expect(part.annotations).toHaveLength(1);
    expectCheckedSource(part.annotations[0]);
  });

  /** A raw request's status and body (a stream's whole text). */
  async function send(path: string, body: unknown): Promise<{ status: number; text: string }> {
    const res = await fetch(`${gw.baseURL}${path}`, { method: "POST", headers: { authorization: `Bearer ${SHIPPED_KEY}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.status, text: await res.text() };
  }

  for (const [name, path, body] of [
    ["chat JSON", "/chat/completions", chatBody(BANNED)],
    ["chat stream", "/chat/completions", { ...chatBody(BANNED), stream: true }],
    ["Responses JSON", "/responses", responsesBody(BANNED)],
    ["Responses stream", "/responses", { ...responsesBody(BANNED), stream: true }],
  ] as const) {
    it(`${name}: a block rule matching only a source's title refuses the answer`, async () => {
      const r = await send(path, body);
      expect(r.text).toContain("GUARDRAIL_BLOCKED");
      expect(r.text).toContain("no-launch");
      expect(r.text).not.toMatch(/falcon-launch/i);
      if (!("stream" in body)) expect(r.status).toBe(400);
    });
  }
});
