// A Gemini client streaming a translated model (OpenAI chat) through an output rule: no chunk carries an empty text
// part beside another part, and the chunks carry the whole answer. Gemini CLI (0.61) leaves out of its history every chunk that has an
// empty text part, whatever else it carries: the text the guardrail's window held back went out in the finish chunk
// beside the translator's empty `{"text":""}`, so a short answer (all of it held) reached Gemini CLI as an "empty
// response" it asked for three more times (four billed generations), and a long one lost its last 64 characters from
// the history. On the shipped gateway.yaml with a guardrails block rule added to its project.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerRecordOf, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, SHIPPED_PROJECT, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";

const SECRET = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH";
const SHORT = "Hi there, how can I help?";
const LONG = "Here is a longer answer that runs well past the guardrail's window of sixty-four characters, so most of it goes out as it streams and only its tail is held back until the end.";
const LEAD = "Here is what the tool printed when it read the configuration file you asked me about:";
const MODEL = "openai/gpt-4.1";
const MESSAGE = 'The answer was blocked by guardrail "no-secrets"';

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;
let answer = SHORT;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
  openai.textFor = () => answer;
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.projects[SHIPPED_PROJECT].guardrails = { rules: [{ name: "no-secrets", detect: ["secret"], on: ["output"], action: "block" }] };
  gw = await startTestGateway(config, { env: providerEnv(config) });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

/** The stream's `data:` frames, parsed, and the request's ledger record. */
async function stream(): Promise<{ frames: any[]; ledger: any }> {
  const res = await fetch(`${gw.url}/api/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, {
    method: "POST",
    headers: { "x-goog-api-key": SHIPPED_KEY, "content-type": "application/json" },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
  });
  expect(res.status).toBe(200);
  const body = await res.text();
  const frames = body.split(/\r?\n\r?\n/).filter((f) => f.trim()).map((f) => JSON.parse(f.replace(/^data: /, "")));
  return { frames, ledger: await ledgerRecordOf(gw, res.headers.get("x-request-id")) };
}

const partsOf = (frames: any[]) => frames.flatMap((f) => f.candidates ?? []).map((c: any) => c.content?.parts ?? []);
/** The chunks' parts that hold an empty text part beside another part (Gemini CLI loses those other parts). */
const mixed = (frames: any[]) => partsOf(frames).filter((parts) => parts.length > 1 && parts.some((p: any) => p.text === ""));
/** The text Gemini CLI keeps of the stream: the text parts of the chunks that have no empty text part. */
const keptText = (frames: any[]) =>
  partsOf(frames).filter((parts) => !parts.some((p: any) => p.text === "")).flat().map((p: any) => p.text ?? "").join("");

describe("a Gemini stream on a translated model through an output rule", () => {
  it.each([["short", SHORT], ["long", LONG]])("a %s answer the rule allows: no empty text part beside another, and the chunks carry the whole answer", async (_, text) => {
    answer = text;
    const { frames, ledger } = await stream();
    expect(mixed(frames)).toEqual([]);
    expect(keptText(frames)).toBe(text);
    expect(frames.at(-1).candidates[0].finishReason).toBe("STOP");
    expect(ledger).toMatchObject({ status: 200, outcome: "ok" });
  });

  it("an answer the rule blocks: no empty text part beside another, the text before the match and the rule's message are kept", async () => {
    answer = `${LEAD} the key is ${SECRET}, nothing else.`;
    const { frames, ledger } = await stream();
    expect(mixed(frames)).toEqual([]);
    const kept = keptText(frames);
    expect(kept).not.toContain(SECRET);
    expect(kept.startsWith(LEAD.slice(0, 20))).toBe(true);
    expect(kept.endsWith(`\n\n[${MESSAGE}]`)).toBe(true);
    expect(ledger).toMatchObject({ status: 200, outcome: "blocked", guardrail: "block:no-secrets" });
  });
});
