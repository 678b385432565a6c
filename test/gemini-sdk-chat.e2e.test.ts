// The official Gemini SDK's streamed chat (ai.chats.create + sendMessageStream, what Gemini CLI runs) on models the
// gateway translates: the SDK keeps a turn in its history only when every streamed chunk carries parts, so the second
// turn must reach the upstream with the first turn's question and answer, and the last chunk still brings the finish
// reason and the usage.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

/** Imported by a name the type-checker does not resolve, as gemini-sdk.e2e.test.ts does. */
const SDK = "@google/genai";
const sdk: any = await import(SDK).catch(() => undefined);
const KEY = testKey("genai-chat");
const gpt = "openai/gpt-test";
const claude = "anthropic/claude-test";
const pricing = { input: "0.000001", output: "0.000002" };

describe.skipIf(!sdk)("@google/genai streamed chat on translated models", () => {
  let openai: FakeOpenAI;
  let anthropic: FakeAnthropic;
  let gw: TestGateway;
  let ai: any;
  beforeAll(async () => {
    openai = await startFakeOpenAI();
    anthropic = await startFakeAnthropic();
    gw = await startTestGateway({
      providers: {
        oai: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
        claude: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      },
      models: {
        [gpt]: { type: "language", tags: ["tool-use"], endpoints: [{ provider: "oai", model: "gpt-test", pricing }] },
        [claude]: { type: "language", tags: ["tool-use"], max_tokens: 8192, endpoints: [{ provider: "claude", model: "claude-test", pricing }] },
      },
      projects: { acme: { keys: [keyEntry("ci", KEY)] } },
    });
    ai = new sdk.GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: `${gw.url}/api`, retryOptions: { attempts: 1 } } });
  });
  afterAll(async () => {
    await gw?.close();
    await openai?.close();
    await anthropic?.close();
  });

  /** The text of every message of an upstream request, by role (chat and Messages bodies alike). */
  const said = (messages: any[]) =>
    messages.map((m) => [m.role, typeof m.content === "string" ? m.content : m.content.map((b: any) => b.text ?? "").join("")]);

  it.each([gpt, claude])("%s: the second turn carries the first; the last chunk has the finish reason and the usage", async (model) => {
    const upstream = model === gpt ? openai : anthropic;
    const chat = ai.chats.create({ model });
    let first = "";
    let last: any;
    for await (const chunk of await chat.sendMessageStream({ message: "My name is Ada." })) {
      first += chunk.text ?? "";
      last = chunk;
    }
    expect(first.length).toBeGreaterThan(0);
    expect(last.candidates[0].finishReason).toBe("STOP");
    expect(last.usageMetadata.promptTokenCount).toBeGreaterThan(0);
    expect(last.usageMetadata.candidatesTokenCount).toBeGreaterThan(0);
    // The SDK dropped a turn any of whose chunks had no parts: its curated history would be empty.
    // The SDK drops a turn any of whose chunks has no parts, with the question before it.
    const roles = chat.getHistory(true).map((c: any) => c.role);
    expect(roles[0]).toBe("user");
    expect(roles.length).toBeGreaterThan(1);
    expect(new Set(roles.slice(1))).toEqual(new Set(["model"]));

    for await (const chunk of await chat.sendMessageStream({ message: "What is my name?" })) void chunk;
    const sent = upstream.requests.at(-1)!.body.messages.filter((m: any) => m.role !== "system");
    expect(said(sent)).toEqual([["user", "My name is Ada."], ["assistant", first], ["user", "What is my name?"]]);
  });
});
