// A legacy function-calling client (functions + function_call, the openai SDK) reads only message.function_call /
// delta.function_call and finish_reason "function_call" (protocols.md §1.6). On a translated model (Anthropic,
// Gemini, Bedrock Converse) and the simulator its answer comes back in that shape, JSON and streamed, and the next
// turn (the assistant's function_call, then a role function message) still pairs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { FAKE_AWS, startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";
import { REDACTED_DATA, REDACTED_TRIGGER, signThinking } from "./upstreams/anthropic-checks.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("chat-legacy-functions");
const price = { input: "0.000001", output: "0.000002" };
let claude: FakeAnthropic;
let gem: FakeGemini;
let aws: FakeBedrock;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  [claude, gem, aws] = await Promise.all([startFakeAnthropic(), startFakeGemini(), startFakeBedrock()]);
  gw = await startTestGateway({
    providers: {
      claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      gem: { protocol: "gemini", base_url: gem.baseUrl, api_key: FAKE_GEMINI_KEY },
      aws: { protocol: "bedrock", region: FAKE_AWS.region, aws_access_key_id: FAKE_AWS.accessKeyId, aws_secret_access_key: FAKE_AWS.secretAccessKey, base_url: aws.baseUrl },
      sim: { protocol: "sim" },
    },
    models: {
      "legacy/claude": { endpoints: [{ provider: "claude", model: "claude-sonnet-4-5", pricing: price }] },
      "legacy/gemini": { endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing: price }] },
      "legacy/llama": { endpoints: [{ provider: "aws", model: "us.meta.llama3-3-70b-instruct-v1:0", pricing: price }] },
      "legacy/sim": { endpoints: [{ provider: "sim", model: "sim-1", pricing: price }] },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
  client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([claude?.close(), gem?.close(), aws?.close()]);
});

const functions = [{ name: "get_weather", description: "weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];
const ask = { messages: [{ role: "user" as const, content: "weather in Paris?" }], functions, function_call: { name: "get_weather" } };

describe.each(["legacy/claude", "legacy/gemini", "legacy/llama", "legacy/sim"])("%s answers a forced legacy function as function_call", (model) => {
  it("JSON", async () => {
    const r = await client.chat.completions.create({ model, ...ask });
    const c = r.choices[0]!;
    expect(c.finish_reason).toBe("function_call");
    expect(c.message.function_call?.name).toBe("get_weather");
    expect(JSON.parse(c.message.function_call!.arguments)).toBeTypeOf("object");
    expect(c.message.tool_calls ?? []).toEqual([]);
  });

  it("stream", async () => {
    const s = client.chat.completions.stream({ model, ...ask });
    const f = await s.finalChatCompletion();
    const c = f.choices[0]!;
    expect(c.finish_reason).toBe("function_call");
    expect(c.message.function_call?.name).toBe("get_weather");
    expect(JSON.parse(c.message.function_call!.arguments)).toBeTypeOf("object");
    expect(c.message.tool_calls ?? []).toEqual([]);
  });

  it("the next turn sends the call and its result back and gets text", async () => {
    const first = await client.chat.completions.create({ model, ...ask });
    const call = first.choices[0]!.message.function_call!;
    const r = await client.chat.completions.create({
      model,
      functions,
      messages: [...ask.messages, { role: "assistant", content: null, function_call: call }, { role: "function", name: call.name, content: "sunny, 21°C" }],
    });
    expect(r.choices[0]!.finish_reason).toBe("stop");
    expect(r.choices[0]!.message.content).toBeTruthy();
  });
});

// A client that drops the answer's reasoning_details (the openai SDK rebuilds a legacy turn as content +
// function_call) still gets Claude's signed thinking replayed on the next turn: the gateway keeps it under the call
// the client sends back (the conversation before it, its name and arguments), as it does under a tool call's id.
describe.each([false, true])("a thinking Claude model across a legacy function turn (stream=%s)", (stream) => {
  it("turn 2 replays the signed thinking, with thinking on", async () => {
    const first = { model: "legacy/claude", reasoning_effort: "low" as const, messages: ask.messages, functions };
    const call = stream
      ? (await client.chat.completions.stream(first).finalChatCompletion()).choices[0]!.message.function_call!
      : (await client.chat.completions.create(first)).choices[0]!.message.function_call!;
    expect(call.name).toBe("get_weather");
    const r = await postJson(`${gw.baseURL}/chat/completions`, {
      ...first,
      messages: [...ask.messages, { role: "assistant", content: null, function_call: call }, { role: "function", name: call.name, content: "sunny, 21°C" }],
    }, { authorization: `Bearer ${KEY}` });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-mg-dropped-params")).toBeNull();
    const sent = claude.requests.at(-1)!.body;
    expect(sent.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    const turn = sent.messages[1].content[0];
    expect(turn).toMatchObject({ type: "thinking", thinking: "Let me think about this carefully." });
    expect(turn.signature).toBe(signThinking(turn.thinking));
  });
});

// Two conversations of one project whose first call is the same (same place, function and arguments — common) keep
// their reasoning apart: each one's next turn gets its own signed thinking back, never the other's, which may quote
// the other user's prompt. A's prompt makes the fake start its thinking with a redacted block, so the two differ.
describe.each([false, true])("two conversations with the same first legacy call (stream=%s)", (stream) => {
  it("each one's turn 2 replays its own thinking, not the other's", async () => {
    const turn1 = async (prompt: string) => {
      const first = { model: "legacy/claude", reasoning_effort: "low" as const, messages: [{ role: "user" as const, content: prompt }], functions };
      const call = stream
        ? (await client.chat.completions.stream(first).finalChatCompletion()).choices[0]!.message.function_call!
        : (await client.chat.completions.create(first)).choices[0]!.message.function_call!;
      return { first, call };
    };
    const turn2 = async ({ first, call }: Awaited<ReturnType<typeof turn1>>) => {
      const r = await postJson(`${gw.baseURL}/chat/completions`, {
        ...first,
        messages: [...first.messages, { role: "assistant", content: null, function_call: call }, { role: "function", name: call.name, content: "sunny, 21°C" }],
      }, { authorization: `Bearer ${KEY}` });
      expect(r.status).toBe(200);
      expect(r.headers.get("x-mg-dropped-params")).toBeNull();
      return claude.requests.at(-1)!.body.messages[1].content;
    };
    const b = await turn1("weather in Paris?");
    const a = await turn1(`weather in Paris? ${REDACTED_TRIGGER}`);
    expect(a.call).toEqual(b.call); // the same call at the same place: only the conversation tells them apart
    const bSent = await turn2(b);
    expect(bSent[0]).toMatchObject({ type: "thinking", thinking: "Let me think about this carefully." });
    expect(JSON.stringify(bSent)).not.toContain(REDACTED_DATA);
    const aSent = await turn2(a);
    expect(aSent[0]).toEqual({ type: "redacted_thinking", data: REDACTED_DATA });
    expect(aSent[1]).toMatchObject({ type: "thinking", thinking: "Let me think about this carefully." });
  });
});
