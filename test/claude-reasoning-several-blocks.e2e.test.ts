// An assistant turn carrying the reasoning of two earlier Claude answers (opencode's Responses provider after a
// blocked step sends two reasoning items before the turn's message) goes back to Anthropic as two thinking blocks,
// each with its own signature, in order: the fake refuses a block whose signature does not cover its text, as the
// real API does ("Invalid `signature` in `thinking` block"). Each answer numbers its reasoning from 0, so the two
// answers' reasoning_details share an index; the same holds from chat clients and Gemini clients.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { signThinking } from "./upstreams/anthropic-checks.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("claude-reasoning-several-blocks");
const CLAUDE = "anthropic/claude-sonnet-4.5";
let claude: FakeAnthropic;
let gw: TestGateway;

/** The fake thinks about the question it was asked last, so two answers carry different signed texts. */
const thoughtOn = (question: string) => `Thinking about: ${question}`;

beforeAll(async () => {
  claude = await startFakeAnthropic();
  claude.thinkingFor = (body) => {
    const last = body.messages.filter((m: any) => m.role === "user").at(-1);
    const text = typeof last.content === "string" ? last.content : last.content.map((b: any) => b.text ?? "").join("");
    return thoughtOn(text);
  };
  gw = await startTestGateway({
    providers: { claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY } },
    models: { [CLAUDE]: { type: "language", tags: ["reasoning"], endpoints: [{ provider: "claude", model: "claude-sonnet-4-5", pricing: { input: "0.000003", output: "0.000015" } }] } },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await claude?.close();
});

const auth = { authorization: `Bearer ${KEY}` };
/** The assistant turn the upstream got last, and the blocks it expected there. */
const lastAssistantTurn = () => claude.requests.at(-1)!.body.messages.filter((m: any) => m.role === "assistant").at(-1);
const signed = (question: string) => ({ type: "thinking", thinking: thoughtOn(question), signature: signThinking(thoughtOn(question)) });

describe("two answers' reasoning in one assistant turn reach Claude as two signed thinking blocks", () => {
  it("Responses: [user, reasoning A, reasoning B, message, user]", async () => {
    const ask = (input: unknown) =>
      postJson(`${gw.baseURL}/responses`, { model: CLAUDE, input, reasoning: { effort: "low" }, max_output_tokens: 4000, store: false, include: ["reasoning.encrypted_content"] }, auth);
    const a = await ask("First question");
    const b = await ask("Second question");
    expect([a.status, b.status]).toEqual([200, 200]);
    const reasoningOf = (r: any) => r.json.output.find((o: any) => o.type === "reasoning");
    const message = b.json.output.find((o: any) => o.type === "message");

    const r = await ask([{ role: "user", content: "First question" }, reasoningOf(a), reasoningOf(b), message, { role: "user", content: "Third question" }]);
    expect(r.status, r.text).toBe(200);
    expect(lastAssistantTurn().content.filter((c: any) => c.type !== "text")).toEqual([signed("First question"), signed("Second question")]);
  });

  it("chat: an assistant message whose reasoning_details hold both answers' blocks", async () => {
    const ask = (messages: unknown[]) => postJson(`${gw.baseURL}/chat/completions`, { model: CLAUDE, messages, reasoning_effort: "low", max_tokens: 4000 }, auth);
    const a = await ask([{ role: "user", content: "First chat question" }]);
    const b = await ask([{ role: "user", content: "Second chat question" }]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const [ma, mb] = [a.json.choices[0].message, b.json.choices[0].message];
    expect([ma.reasoning_details[0].index, mb.reasoning_details[0].index]).toEqual([0, 0]);

    const turn = { role: "assistant", content: mb.content, reasoning_details: [...ma.reasoning_details, ...mb.reasoning_details] };
    const r = await ask([{ role: "user", content: "First chat question" }, turn, { role: "user", content: "Third chat question" }]);
    expect(r.status, r.text).toBe(200);
    expect(lastAssistantTurn().content.filter((c: any) => c.type !== "text")).toEqual([signed("First chat question"), signed("Second chat question")]);
  });

  it("Gemini: a model turn whose parts carry both answers' thought signatures", async () => {
    const config = { thinkingConfig: { thinkingBudget: 1024 }, maxOutputTokens: 4000 };
    const ask = (contents: unknown[]) =>
      postJson(`${gw.url}/api/v1beta/models/${CLAUDE}:generateContent`, { contents, generationConfig: config }, { "x-goog-api-key": KEY });
    const user = (text: string) => ({ role: "user", parts: [{ text }] });
    const a = await ask([user("First Gemini question")]);
    const b = await ask([user("Second Gemini question")]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const kept = (r: any) => r.json.candidates[0].content.parts.filter((p: any) => p.thought !== true);
    const parts = [...kept(a), ...kept(b)];
    // Each answer's reasoning rides on its first kept part.
    expect(parts.filter((p: any) => /^mgr1\./.test(p.thoughtSignature))).toHaveLength(2);

    const r = await ask([user("First Gemini question"), { role: "model", parts }, user("Third Gemini question")]);
    expect(r.status, r.text).toBe(200);
    expect(lastAssistantTurn().content.filter((c: any) => c.type !== "text")).toEqual([signed("First Gemini question"), signed("Second Gemini question")]);
  });
});
