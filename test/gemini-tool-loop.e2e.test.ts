// Tool loops on a Gemini model through the OpenAI clients: calls Gemini did not make (another model's, before a
// fallback) reach Gemini with Google's placeholder signature, and parallel_tool_calls: false is honoured although
// Gemini has no such setting. Fake upstreams that refuse what the real ones refuse.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const LIVE = testKey("gem-tool-loop");
const pricing = { input: "0.000001", output: "0.000002" };
let chat: FakeOpenAI;
let gemini: FakeGemini;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  [chat, gemini] = await Promise.all([startFakeOpenAI(), startFakeGemini()]);
  gw = await startTestGateway({
    providers: {
      chat: { protocol: "openai", base_url: chat.baseUrl, api_key: "sk-fake-upstream" },
      gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
    },
    models: {
      "t/chat": { type: "language", endpoints: [{ provider: "chat", model: "gpt-4o-mini", pricing }] },
      "t/gem": { type: "language", endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing }] },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
  client = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([chat?.close(), gemini?.close()]);
});

const fn = (name: string) => ({ type: "function" as const, function: { name, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } });
const tools = [fn("get_weather"), fn("get_time")];

describe("tool loops on Gemini", () => {
  it("a tool loop whose calls another model made continues on Gemini (fallback): the calls get the placeholder signature", async () => {
    const q = { role: "user" as const, content: "weather and time in Paris?" };
    const first = await client.chat.completions.create({ model: "t/chat", messages: [q], tools });
    const calls = first.choices[0]!.message.tool_calls!;
    expect(calls.length).toBeGreaterThan(0);
    chat.failures.push({ kind: "status", status: 503 }); // the OpenAI model is down: the route falls back to Gemini
    const second = await client.chat.completions.create({
      model: "t/chat", tools, providerOptions: { gateway: { models: ["t/gem"] } },
      messages: [q, first.choices[0]!.message, ...calls.map((c) => ({ role: "tool" as const, tool_call_id: c.id, content: "sunny" }))],
    } as any);
    expect(second.choices[0]!.message.content).toBe("The weather is sunny.");
    const model = gemini.requests.at(-1)!.body.contents[1];
    expect(model.role).toBe("model");
    expect(model.parts.find((p: any) => p.functionCall).thoughtSignature).toBe("skip_thought_signature_validator");
  });

  it("parallel_tool_calls: false gets one call (JSON and stream), and the loop goes on with its answer", async () => {
    const messages = [{ role: "user" as const, content: "weather and time?" }];
    const both = await client.chat.completions.create({ model: "t/gem", messages, tools });
    expect(both.choices[0]!.message.tool_calls!.length).toBe(2); // what Gemini answers

    const one = await client.chat.completions.create({ model: "t/gem", messages, tools, parallel_tool_calls: false });
    expect(one.choices[0]!.message.tool_calls!.map((c) => (c as any).function.name)).toEqual(["get_weather"]);
    expect(one.choices[0]!.finish_reason).toBe("tool_calls");

    const names: string[] = [];
    for await (const c of await client.chat.completions.create({ model: "t/gem", messages, tools, parallel_tool_calls: false, stream: true })) {
      for (const tc of c.choices[0]?.delta?.tool_calls ?? []) names.push(tc.function!.name!);
    }
    expect(names).toEqual(["get_weather"]);

    const call = one.choices[0]!.message.tool_calls![0]!;
    const next = await client.chat.completions.create({ model: "t/gem", tools, parallel_tool_calls: false,
      messages: [...messages, one.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "sunny" }] });
    expect(next.choices[0]!.message.content).toBe("The weather is sunny.");
  });

  it("a Responses client gets one function_call with parallel_tool_calls: false", async () => {
    const r: any = await client.responses.create({ model: "t/gem", input: "weather and time?", parallel_tool_calls: false,
      tools: tools.map((t) => ({ type: "function", name: t.function.name, parameters: t.function.parameters, strict: false })) });
    expect(r.parallel_tool_calls).toBe(false);
    expect(r.output.filter((o: any) => o.type === "function_call").map((o: any) => o.name)).toEqual(["get_weather"]);
  });
});
