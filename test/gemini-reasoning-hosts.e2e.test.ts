// A Gemini client (@google/genai, kept the way Gemini CLI keeps its history: thought parts dropped, signatures kept)
// on reasoning models of OpenAI-compatible hosts: a two-turn tool loop gives each host its reasoning back the way it
// wants it, from the thoughtSignature the gateway put on the function call — DeepSeek refuses the tool-call turn
// without its reasoning_content, Groq takes `reasoning` only, OpenRouter's encrypted reasoning must come back unaltered
// (each fake refuses what its host refuses: upstreams/openai-reasoning.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { reasoningFor, type ReasoningHost } from "./upstreams/openai-reasoning.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

/** Not a devDependency yet: imported by a name the type-checker does not resolve, so the suite builds without it. */
const SDK = "@google/genai";
const sdk: any = await import(SDK).catch(() => undefined);
const KEY = testKey("gemini-reasoning-hosts");
const HOSTS: Record<ReasoningHost, string> = { reasoning: "groq", reasoning_content: "deepseek", reasoning_details: "openrouter" };
const model = (host: ReasoningHost) => `${HOSTS[host]}/thinker`;

describe.skipIf(!sdk)("Gemini clients on OpenAI-compatible thinking hosts", () => {
  const chat: Partial<Record<ReasoningHost, FakeOpenAI>> = {};
  let gw: TestGateway;
  let ai: any;

  beforeAll(async () => {
    const pricing = { input: "0.000001", output: "0.000002" };
    const providers: Record<string, unknown> = {};
    const models: Record<string, unknown> = {};
    for (const [host, name] of Object.entries(HOSTS) as [ReasoningHost, string][]) {
      chat[host] = await startFakeOpenAI();
      chat[host]!.reasoning = host;
      // A loopback URL says nothing about the host it plays: the convention the real host's URL gets, stated.
      providers[name] = { protocol: "openai", base_url: chat[host]!.baseUrl, api_key: "sk-fake-upstream", reasoning_field: host };
      models[model(host)] = { type: "language", tags: ["tool-use", "reasoning"], endpoints: [{ provider: name, model: "thinker-1", pricing }] };
    }
    gw = await startTestGateway({ providers, models, projects: { acme: { keys: [keyEntry("ci", KEY)] } } });
    ai = new sdk.GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: `${gw.url}/api`, retryOptions: { attempts: 1 } } });
  });

  afterAll(async () => {
    await gw?.close();
    await Promise.all(Object.values(chat).map((f) => f!.close()));
  });

  const config = {
    tools: [{ functionDeclarations: [{ name: "get_weather", parametersJsonSchema: { type: "object", properties: { city: { type: "string" } } } }] }],
    thinkingConfig: { includeThoughts: true }, // what Gemini CLI sends: medium effort
  };

  /** The model turn's parts as Gemini CLI keeps them (streamed: every chunk's), thought parts dropped. */
  async function modelParts(streamed: boolean, req: any): Promise<any[]> {
    if (!streamed) return (await ai.models.generateContent(req)).candidates[0].content.parts;
    const parts: any[] = [];
    for await (const c of await ai.models.generateContentStream(req)) parts.push(...(c.candidates?.[0]?.content?.parts ?? []));
    return parts;
  }

  describe.each([false, true])("stream=%s", (streamed) => {
    it.each(Object.keys(HOSTS) as ReasoningHost[])("%s: the reasoning goes back to the host on turn 2, in its own field", async (host) => {
      const contents = [{ role: "user", parts: [{ text: "Weather in Paris?" }] }];
      const parts = (await modelParts(streamed, { model: model(host), contents, config })).filter((p) => p.thought !== true);
      const call = parts.find((p) => p.functionCall);
      expect(call.thoughtSignature).toMatch(/^mgr1\./);
      const answer = parts.filter((p) => p.functionCall).map((p) => ({ functionResponse: { id: p.functionCall.id, name: p.functionCall.name, response: { output: "21C and sunny" } } }));
      const second = await ai.models.generateContent({ model: model(host), contents: [...contents, { role: "model", parts }, { role: "user", parts: answer }], config });
      expect(second.text).toBe("Hello from the fake upstream, streaming word by word.");
      const turn = chat[host]!.requests.at(-1)!.body.messages.find((m: any) => m.role === "assistant");
      if (host === "reasoning_details") {
        expect(turn.reasoning_details).toEqual([expect.objectContaining({ type: "reasoning.encrypted", format: "openai-responses-v1" })]);
        expect(turn.reasoning).toBe(reasoningFor("medium"));
      } else {
        expect(turn[host]).toBe(reasoningFor("medium"));
        expect(Object.keys(turn).filter((k) => k.startsWith("reasoning"))).toEqual([host]);
      }
    });
  });
});
