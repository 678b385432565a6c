// A Gemini stream the guardrails block mid-way (an output rule with action block, the model echoing a secret it was
// given in a function response) ends as Google ends an answer its own filters stop: a last candidate with
// finishReason SAFETY whose finishMessage, and text, name the rule; then Google's error object; then the response is
// ended, not cut. Cut after the error frame, a client that had not yet read the last frames lost them to the cut
// ("TypeError: terminated", all Gemini CLI showed), and Gemini CLI's @google/genai (1.30) reads no `error` frame at
// all. The clients read each piece as they do (docs/gemini.md "Streams"). On the shipped gateway.yaml with a
// guardrails block rule added to its project.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, GoogleGenAI } from "@google/genai";
import { ledgerRecordOf, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, SHIPPED_PROJECT, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";

const SECRET = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH";
// More than the guardrail's 64-character window before the secret: that much of the answer is sent before the block.
const LEAD = "Here is what the tool printed when it read the configuration file you asked me about:";
const MODEL = "anthropic/claude-sonnet-4.5";
const MESSAGE = 'The answer was blocked by guardrail "no-secrets"';

let anthropic: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  anthropic = await startFakeAnthropic();
  anthropic.script = ({ answered }) => (answered ? { text: `${LEAD} the key is ${SECRET}, nothing else.` } : undefined);
  const config = shippedConfig({ openai: anthropic.baseUrl /* not asked here */, anthropic: anthropic.baseUrl });
  config.projects[SHIPPED_PROJECT].guardrails = { rules: [{ name: "no-secrets", detect: ["secret"], on: ["output"], action: "block" }] };
  gw = await startTestGateway(config, { env: providerEnv(config) });
});

afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
});

/** A Gemini CLI-like turn: the file it read, and the function response holding the secret. */
const contents = [
  { role: "user", parts: [{ text: "What key does the config hold?" }] },
  { role: "model", parts: [{ functionCall: { name: "read_file", args: { file_path: "/work/.env" } } }] },
  { role: "user", parts: [{ functionResponse: { name: "read_file", response: { output: `OPENAI_API_KEY=${SECRET}` } } }] },
];
const tools = [{ functionDeclarations: [{ name: "read_file", parameters: { type: "object", properties: { file_path: { type: "string" } } } }] }];

/**
 * `fetch` that hands the response over only once the gateway has finished it (its ledger record is written): the
 * client reads nothing before the response has ended or been cut, as a client busy with earlier chunks does.
 */
const afterTheEnd: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  await ledgerRecordOf(gw, res.headers.get("x-request-id"));
  return res;
};

describe("a Gemini stream the guardrails block mid-way", () => {
  it("ends with a SAFETY candidate naming the rule, then Google's error object, and then the response's proper end", async () => {
    const res = await afterTheEnd(`${gw.url}/api/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, {
      method: "POST",
      headers: { "x-goog-api-key": SHIPPED_KEY, "content-type": "application/json" },
      body: JSON.stringify({ contents, tools }),
    });
    expect(res.status).toBe(200);
    // res.text() rejects ("terminated") when the body is cut rather than ended.
    const body = await res.text();
    const frames = body.split(/\r?\n\r?\n/).filter((f) => f.trim()).map((f) => {
      expect(f.startsWith("data: ")).toBe(true);
      return JSON.parse(f.slice(6));
    });
    expect(body).not.toContain(SECRET);
    const [blocked, error] = frames.slice(-2);
    const text = frames.slice(0, -2).flatMap((f) => f.candidates[0].content.parts.map((p: any) => p.text ?? "")).join("");
    expect(text.startsWith(LEAD.slice(0, 20))).toBe(true); // the answer up to the window before the secret was sent
    expect(blocked).toEqual({
      candidates: [{ content: { role: "model", parts: [{ text: `\n\n[${MESSAGE}]` }] }, finishReason: "SAFETY", finishMessage: MESSAGE, index: 0 }],
    });
    expect(error.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT", message: MESSAGE });
    expect(error.error.details).toContainEqual(expect.objectContaining({ reason: "GUARDRAIL_BLOCKED", metadata: expect.objectContaining({ rule: "no-secrets" }) }));
    // Only that one candidate has a finish reason: the answer's own last event (STOP) was not sent.
    expect(frames.filter((f) => f.candidates?.[0]?.finishReason)).toEqual([blocked]);
    expect(await ledgerRecordOf(gw, res.headers.get("x-request-id"))).toMatchObject({ status: 200, outcome: "blocked", guardrail: "block:no-secrets" });
  });

  it("@google/genai shows the text so far and the rule's message, and throws its ApiError naming the rule, though busy until the end", async () => {
    const ai = new GoogleGenAI({ apiKey: SHIPPED_KEY, httpOptions: { baseUrl: `${gw.url}/api`, retryOptions: { attempts: 1 } } } as any);
    let text = "";
    let busy = true;
    const finishes: unknown[] = [];
    anthropic.eventDelayMs = 10; // the answer in several reads, as over a network
    const err = await (async () => {
      for await (const chunk of await ai.models.generateContentStream({ model: MODEL, contents, config: { tools } as any })) {
        text += chunk.text ?? "";
        // (The SDK keeps no finishMessage from the Gemini API: the text and the ApiError carry the message.)
        if (chunk.candidates?.[0]?.finishReason) finishes.push(chunk.candidates[0].finishReason);
        // Busy with the first chunk until the gateway has finished the response (as a client rendering it may be):
        // cut after the error frame, the stream failed with "terminated" before the SDK read that frame.
        if (busy) await ledgerRecordOf(gw, chunk.sdkHttpResponse?.headers?.["x-request-id"] ?? null);
        busy = false;
      }
    })().catch((e: unknown) => e).finally(() => void (anthropic.eventDelayMs = 0));
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).message).toContain('The answer was blocked by guardrail \\"no-secrets\\"');
    expect(text).toContain(`[${MESSAGE}]`);
    expect(finishes).toEqual(["SAFETY"]);
  });
});
