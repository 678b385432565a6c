// The official Gemini SDK (@google/genai, what Gemini CLI runs on) against the gateway with `httpOptions.baseUrl`:
// text, a stream, a streamed tool loop with thinking kept the SDK's way (its Chat keeps the whole model turn), a tool
// loop moving from Claude to Gemini, a Claude model by its id with a slash in the path, countTokens, embedContent,
// models.get/list, and an error as the SDK's ApiError. Skipped until the devDependency is installed (the report
// names the version); test/conformance covers the same wire shapes with raw HTTP meanwhile.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

/** Not a devDependency yet: imported by a name the type-checker does not resolve, so the suite builds without it. */
const SDK = "@google/genai";
const sdk: any = await import(SDK).catch(() => undefined);
const KEY = testKey("genai-sdk");
const claude = "anthropic/claude-test";
const gem = "google/gemini-test";
const pricing = { input: "0.000001", output: "0.000002" };

describe.skipIf(!sdk)("@google/genai against the gateway", () => {
  let anthropic: FakeAnthropic;
  let gemini: FakeGemini;
  let gw: TestGateway;
  let ai: any;
  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    gemini = await startFakeGemini();
    gw = await startTestGateway({
      providers: {
        claude: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
        gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
      },
      models: {
        [claude]: { type: "language", tags: ["tool-use", "reasoning"], max_tokens: 8192, endpoints: [{ provider: "claude", model: "claude-test", pricing }] },
        [gem]: { type: "language", tags: ["tool-use", "reasoning"], endpoints: [{ provider: "gem", model: "gemini-test", pricing }] },
      },
      projects: { acme: { keys: [keyEntry("ci", KEY)] } },
    });
    ai = new sdk.GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: `${gw.url}/api`, retryOptions: { attempts: 1 } } });
  });
  afterAll(async () => {
    await gw?.close();
    await anthropic?.close();
    await gemini?.close();
  });

  const tools = [{ functionDeclarations: [{ name: "get_weather", description: "Weather in a city", parameters: { type: "OBJECT", properties: { city: { type: "STRING" } }, required: ["city"] } }] }];

  it.each([claude, gem])("%s: generateContent and a stream; the answer names the model", async (model) => {
    const r = await ai.models.generateContent({ model, contents: "Hi", config: { systemInstruction: "Be brief." } });
    expect(r.text.length).toBeGreaterThan(0);
    expect(r.modelVersion).toBe(model);
    expect(r.usageMetadata.promptTokenCount).toBeGreaterThan(0);
    let text = "";
    for await (const chunk of await ai.models.generateContentStream({ model, contents: "Hi" })) text += chunk.text ?? "";
    expect(text).toBe(r.text);
  });

  it.each([claude, gem])("%s: a chat tool loop with thinking, streamed (the SDK's Chat keeps the model turn as it came)", async (model) => {
    const chat = ai.chats.create({ model, config: { tools, thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 } } });
    const calls: any[] = [];
    for await (const chunk of await chat.sendMessageStream({ message: "Weather in Paris?" })) calls.push(...(chunk.functionCalls ?? []));
    expect(calls.map((c) => c.name)).toEqual(["get_weather"]);
    let answer = "";
    for await (const chunk of await chat.sendMessageStream({ message: calls.map((c) => ({ functionResponse: { id: c.id, name: c.name, response: { output: "sunny" } } })) })) answer += chunk.text ?? "";
    expect(answer).toBe("The weather is sunny.");
    if (model === claude) expect(anthropic.requests.at(-1)!.body.messages[1].content[0].type).toBe("thinking");
  });

  it("a tool loop begun on the Claude model goes on on the Gemini model, replayed as Gemini CLI does (thoughts dropped)", async () => {
    const config = { tools, thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 } };
    const contents: any[] = [{ role: "user", parts: [{ text: "Weather in Paris?" }] }];
    const first = await ai.models.generateContent({ model: claude, contents, config });
    const parts = first.candidates[0].content.parts.filter((p: any) => !p.thought);
    // Claude's signed thinking rides on the text before the call; the call itself is unsigned.
    expect(parts.map((p: any) => [Object.keys(p).filter((k) => k !== "thoughtSignature")[0], p.thoughtSignature?.slice(0, 5)])).toEqual([["text", "mgr1."], ["functionCall", undefined]]);
    const answers = parts.filter((p: any) => p.functionCall).map((p: any) => ({ functionResponse: { id: p.functionCall.id, name: p.functionCall.name, response: { output: "sunny" } } }));
    const second = await ai.models.generateContent({ model: gem, contents: [...contents, { role: "model", parts }, { role: "user", parts: answers }], config });
    expect(second.text).toBe("The weather is sunny."); // the fake, like Gemini, refuses an unsigned first call
    const sent = gemini.requests.at(-1)!.body.contents[1];
    expect(sent.parts.map((p: any) => p.thoughtSignature)).toEqual([undefined, "skip_thought_signature_validator"]);
  });

  it("countTokens, embedContent's error for a language model, models.get and models.list", async () => {
    expect((await ai.models.countTokens({ model: claude, contents: "Hello there" })).totalTokens).toBeGreaterThan(0);
    const m = await ai.models.get({ model: claude });
    expect(m).toMatchObject({ name: `models/${claude}`, inputTokenLimit: expect.any(Number) });
    const names: string[] = [];
    for await (const model of await ai.models.list()) names.push(model.name);
    expect(names).toEqual(expect.arrayContaining([`models/${claude}`, `models/${gem}`]));
    const err = await ai.models.embedContent({ model: claude, contents: "x" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(sdk.ApiError);
    expect(err.status).toBe(400);
  });

  it("an upstream failure is the SDK's ApiError with Google's status and the gateway's code", async () => {
    for (let i = 0; i < 5; i++) anthropic.failures.push({ kind: "status", status: 500 }); // the retries too
    const err = await ai.models.generateContent({ model: claude, contents: "Hi" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(sdk.ApiError);
    expect(err.status).toBe(502);
    expect(JSON.parse(err.message).error).toMatchObject({ status: "UNAVAILABLE", details: [expect.objectContaining({ reason: "UPSTREAM_ERROR" })] });
    anthropic.failures.length = 0;
  });

  it("a stream that fails after its first parts is the SDK's ApiError with the status, not an incomplete stream", async () => {
    // Anthropic's overloaded error after the first text: written after the last frames, in one write with them.
    for (const failure of [{ kind: "error-event" as const, afterEvents: 4, type: "overloaded_error" }]) {
      anthropic.failures.push(failure);
      let text = "";
      const err = await (async () => {
        for await (const chunk of await ai.models.generateContentStream({ model: claude, contents: "Hi" })) text += chunk.text ?? "";
      })().catch((e: any) => e);
      expect(err, failure.kind).toBeInstanceOf(sdk.ApiError);
      expect(err.status).toBeGreaterThanOrEqual(500);
      expect(err.message).toContain("UPSTREAM_ERROR");
      anthropic.failures.length = 0;
    }
  });
});
