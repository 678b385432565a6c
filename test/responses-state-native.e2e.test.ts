// previous_response_id with a native Responses upstream (catalog native_responses): a response made there keeps the
// upstream's id, and the next turn on that provider passes previous_response_id through unchanged (the upstream holds
// its own state); a fallback attempt to a translated provider in the same request gets the rebuilt conversation, and
// a native attempt after a translated turn gets the rebuilt conversation without previous_response_id.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { weatherTools } from "./helpers/responses-fixtures.ts";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

/** A live key's view of a project's stored responses. */
const live = (project: string) => ({ project, sandbox: false });

const LIVE = testKey("resp-state-native");
let native: FakeOpenAIWithResponses;
let chat: FakeOpenAI;
let claude: FakeAnthropic;
let gw: TestGateway;
let client: OpenAI;

/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  [native, chat, claude] = await Promise.all([startFakeOpenAIResponses(), startFakeOpenAI(), startFakeAnthropic()]);
  const pricing = { input: "0.000001", output: "0.000002" };
  gw = await startTestGateway({
    providers: {
      native: { protocol: "openai", base_url: native.baseUrl, api_key: "sk-fake-upstream" },
      chat: { protocol: "openai", base_url: chat.baseUrl, api_key: "sk-fake-upstream" },
      claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
    },
    models: {
      "anthropic/claude-sonnet-4": { type: "language", endpoints: [{ provider: "claude", model: "claude-sonnet-4-20250514", pricing }] },
      "openai/gpt-5": { type: "language", endpoints: [{ provider: "native", model: "gpt-5", native_responses: true, pricing }, { provider: "chat", model: "gpt-5", pricing }] },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
  client = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([native?.close(), chat?.close(), claude?.close()]);
});

const tools = weatherTools;
const model = "openai/gpt-5";
const inOrder = { providerOptions: { gateway: { order: ["native", "chat"] } } };
const create = (p: Record<string, unknown>) => client.responses.create({ model, tools, ...inOrder, ...p } as never) as Promise<OpenAI.Responses.Response>;

describe("previous_response_id across native and translated attempts", () => {
  it("native -> native passes the id through; a fallback gets the rebuilt conversation; native after it gets it too", async () => {
    const t1 = await create({ input: "Weather in Paris?", parallel_tool_calls: false });
    expect(native.requests.at(-1)!.path).toBe("/v1/responses");
    expect(native.responses.stored.has(t1.id)).toBe(true); // the upstream's own id is the gateway's
    const fc = t1.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(fc).toBeDefined();

    const t2 = await create({ previous_response_id: t1.id, input: [{ type: "function_call_output", call_id: fc.call_id, output: "{\"temp\":21}" }] });
    const b2 = native.requests.at(-1)!.body;
    expect(b2.previous_response_id).toBe(t1.id);
    expect(b2.input).toEqual([{ type: "function_call_output", call_id: fc.call_id, output: "{\"temp\":21}" }]);
    expect(t2.previous_response_id).toBe(t1.id);
    expect((await client.responses.retrieve(t2.id)).output_text).toBe(t2.output_text);

    // The native endpoint fails: the fallback to the chat provider gets the whole conversation, rebuilt.
    const chatBefore = chat.requests.length;
    native.failures.push({ kind: "status", status: 500 });
    const t3 = await create({ previous_response_id: t2.id, input: "And tomorrow?", tool_choice: "none" });
    expect(chat.requests.length).toBe(chatBefore + 1);
    const b3 = chat.requests.at(-1)!.body;
    expect(b3.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect(b3.messages[1].tool_calls[0].id).toBe(fc.call_id);
    expect(b3.messages[3].content).toBe(t2.output_text);
    expect(JSON.stringify(b3.messages[4])).toContain("And tomorrow?");
    expect(t3.previous_response_id).toBe(t2.id);
    const stored = async (id: string) => (await gw.gateway.store.responses.get(live("acme"), id, Date.now()))!;
    expect(await stored(t2.id)).toMatchObject({ provider: "native", native: true, previousResponseId: t1.id });
    expect(await stored(t3.id)).toMatchObject({ provider: "chat", native: false, previousResponseId: t2.id });

    // t3 was made by the chat provider: the native upstream cannot continue from it, so it gets the conversation.
    const t4 = await create({ previous_response_id: t3.id, input: "Thanks" });
    const b4 = native.requests.at(-1)!.body;
    expect(b4.previous_response_id).toBeUndefined();
    expect(b4.input.map((i: any) => i.type ?? "message")).toEqual(["message", "function_call", "function_call_output", "message", "message", "message", "message"]);
    expect(t4.previous_response_id).toBe(t3.id);
    expect(t4.status).toBe("completed");
  });

  it("a native stream keeps the upstream's id and can be continued", async () => {
    const s1 = await client.responses.stream({ model, input: "Hi", ...inOrder } as never).finalResponse();
    expect(native.responses.stored.has(s1.id)).toBe(true);
    const s2 = await client.responses.stream({ model, previous_response_id: s1.id, input: "Again", ...inOrder } as never).finalResponse();
    expect(native.requests.at(-1)!.body.previous_response_id).toBe(s1.id);
    expect(s2.previous_response_id).toBe(s1.id);
    expect((await client.responses.retrieve(s2.id)).id).toBe(s2.id);
  });

  it.each([false, true])("the native upstream lost the previous response (stream=%s): the same attempt is sent again with the rebuilt conversation", async (stream) => {
    const t1 = await create({ input: "Remember: the word is marmot.", tools: undefined });
    // OpenAI forgets it (its own retention, a zero-retention org, a key moved to another project); the gateway has it.
    native.responses.stored.delete(t1.id);
    const before = native.requests.length;
    const p = { model, previous_response_id: t1.id, input: "What was the word?", ...inOrder };
    const t2 = stream ? await client.responses.stream(p as never).finalResponse() : await client.responses.create(p as never) as OpenAI.Responses.Response;
    expect(t2.status).toBe("completed");
    expect(t2.previous_response_id).toBe(t1.id);
    const sent = native.requests.slice(before).map((r) => r.body);
    expect(sent).toHaveLength(2);
    expect(sent[0].previous_response_id).toBe(t1.id);
    expect(sent[1].previous_response_id).toBeUndefined();
    expect(JSON.stringify(sent[1].input)).toContain("the word is marmot");
    expect(JSON.stringify(sent[1].input)).toContain("What was the word?");
  });

  it("a native turn after a translated one with reasoning: the gateway's reasoning blobs are not sent to the native upstream", async () => {
    const a1 = await client.responses.create({ model: "anthropic/claude-sonnet-4", input: "Hi", reasoning: { effort: "low" }, max_output_tokens: 4000 });
    expect(a1.output.map((o) => o.type)).toEqual(["reasoning", "message"]);
    // Stored with its signed thinking (hidden from the client without include): an Anthropic turn would replay it.
    const rec = await gw.gateway.store.responses.get(live("acme"), a1.id, Date.now());
    expect(String((rec!.fullOutput![0] as any).encrypted_content)).toMatch(/^mgr1\./);
    const n1 = await create({ previous_response_id: a1.id, input: "More", tools: undefined });
    const body = native.requests.at(-1)!.body;
    expect(body.input.map((i: any) => i.type)).toEqual(["message", "message", "message"]);
    expect(n1.status).toBe("completed");
  });
});
