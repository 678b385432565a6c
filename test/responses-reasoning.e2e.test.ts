// Reasoning carried across a function-tool loop on translated upstreams (issue 13), with the official openai client
// sending the whole output back (store: false, include reasoning.encrypted_content): an Anthropic model with extended
// thinking gets its signed thinking (and redacted_thinking) blocks back first in the assistant turn, before the
// tool_use — the fake refuses the tool_result turn otherwise, as the real API does; a Gemini model gets its thought
// signature back on the functionCall part. input_file parts reach Anthropic as document blocks.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { REDACTED_DATA, REDACTED_TRIGGER, signThinking } from "./upstreams/anthropic-checks.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { weatherTools } from "./helpers/responses-fixtures.ts";
import { expectOpenAIResponseEvent, openAIShapeChecker } from "./helpers/openai-spec.ts";

const KEY = testKey("responses-reasoning");
const CLAUDE = "anthropic/claude-sonnet-4";
const GEMINI = "google/gemini-3-flash";
let claude: FakeAnthropic;
let gemini: FakeGemini;
let gw: TestGateway;
let client: OpenAI;

/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  [claude, gemini] = await Promise.all([startFakeAnthropic(), startFakeGemini()]);
  gw = await startTestGateway({
    providers: {
      claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
    },
    models: {
      [CLAUDE]: { type: "language", endpoints: [{ provider: "claude", model: "claude-sonnet-4-20250514", pricing: { input: "0.000003", output: "0.000015" } }] },
      [GEMINI]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-3-flash", pricing: { input: "0.0000003", output: "0.0000025" } }] },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
  client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([claude?.close(), gemini?.close()]);
});

const tools = weatherTools;

type Params = Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, "stream">;
const create = (streamed: boolean, p: Params) => (streamed ? client.responses.stream(p).finalResponse() : client.responses.create(p));

describe.each([false, true])("Anthropic extended thinking across a tool loop (stream=%s)", (streamed) => {
  const base = { model: CLAUDE, tools, parallel_tool_calls: false, reasoning: { effort: "low" as const }, max_output_tokens: 4000 };

  it("store: false + include: the reasoning item comes back and the upstream gets its signed blocks before the tool_use", async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: `Weather in Paris? ${REDACTED_TRIGGER}` }];
    const first = await create(streamed, { ...base, input, store: false, include: ["reasoning.encrypted_content"] });
    expect(first.output.map((o) => o.type)).toEqual(["reasoning", "message", "function_call"]);
    const rs = first.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(rs.summary[0]!.text).toBe("Let me think about this carefully.");
    expect(rs.encrypted_content).toMatch(/^mgr1\./);
    const fc = first.output[2] as OpenAI.Responses.ResponseFunctionToolCall;
    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]));
    input.push({ type: "function_call_output", call_id: fc.call_id, output: JSON.stringify({ temp: 21 }) });

    const second = await create(streamed, { ...base, input, store: false, include: ["reasoning.encrypted_content"] });
    expect(second.status).toBe("completed");
    expect(second.output_text).toBe("The weather is sunny.");
    const sent = claude.requests.at(-1)!.body;
    expect(sent.thinking).toMatchObject({ type: "enabled" });
    const turn = sent.messages.at(-2);
    expect(turn.role).toBe("assistant");
    expect(turn.content.map((b: any) => b.type)).toEqual(["redacted_thinking", "thinking", "text", "tool_use"]);
    expect(turn.content[0]).toEqual({ type: "redacted_thinking", data: REDACTED_DATA });
    expect(turn.content[1]).toEqual({ type: "thinking", thinking: "Let me think about this carefully.", signature: signThinking("Let me think about this carefully.") });
    expect(turn.content[3]).toMatchObject({ type: "tool_use", id: fc.call_id, name: "get_weather" });
  });

  it("without the reasoning item (which the upstream would refuse the tool_result turn for) thinking is off for that request, named in x-mg-dropped-params", async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: "Weather in Paris?" }];
    const first = await create(streamed, { ...base, input, store: false });
    // store: false shows encrypted_content even without include: there is no server-side state to rebuild from.
    expect((first.output[0] as OpenAI.Responses.ResponseReasoningItem).encrypted_content).toMatch(/^mgr1\./);
    const fc = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    input.push(...(first.output.filter((o) => o.type !== "reasoning") as OpenAI.Responses.ResponseInputItem[]));
    input.push({ type: "function_call_output", call_id: fc.call_id, output: "21C" });
    const { data, response } = await client.responses.create({ ...base, input, store: false, stream: streamed } as OpenAI.Responses.ResponseCreateParamsNonStreaming).withResponse();
    if (streamed) for await (const _ of data as unknown as AsyncIterable<unknown>) { /* drain */ }
    else expect(data.status).toBe("completed");
    expect(response.headers.get("x-mg-dropped-params")).toBe("reasoning.effort");
    expect(claude.requests.at(-1)!.body.thinking).toBeUndefined();
  });
});

describe.each([false, true])("Anthropic extended thinking across a stored tool loop (previous_response_id, stream=%s)", (streamed) => {
  it("no include: the client never sees encrypted_content, the stored response keeps it and the rebuilt turn has the signed block", async () => {
    const base = { model: CLAUDE, tools, parallel_tool_calls: false, reasoning: { effort: "low" as const }, max_output_tokens: 4000 };
    const first = await create(streamed, { ...base, input: "Weather in Paris?" });
    expect(first.output[0]!.type).toBe("reasoning");
    expect(JSON.stringify(first)).not.toContain("encrypted_content");
    const fc = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    const second = await create(streamed, { ...base, previous_response_id: first.id, input: [{ type: "function_call_output", call_id: fc.call_id, output: "21C" }] });
    expect(second.output_text).toBe("The weather is sunny.");
    const turn = claude.requests.at(-1)!.body.messages.at(-2);
    expect(turn.content.map((b: any) => b.type)).toEqual(["thinking", "text", "tool_use"]);
    expect(turn.content[0].signature).toBe(signThinking(turn.content[0].thinking));
  });

  it("no include, the output appended to the next input (reasoning by id alone): the stored encrypted_content fills it in", async () => {
    const base = { model: CLAUDE, tools, parallel_tool_calls: false, reasoning: { effort: "low" as const }, max_output_tokens: 4000 };
    const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: "Weather in Paris?" }];
    const first = await create(streamed, { ...base, input });
    expect(JSON.stringify(first)).not.toContain("encrypted_content");
    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]));
    const fc = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    input.push({ type: "function_call_output", call_id: fc.call_id, output: "21C" });
    const second = await create(streamed, { ...base, input });
    expect(second.output_text).toBe("The weather is sunny.");
    expect(claude.requests.at(-1)!.body.messages.at(-2).content.map((b: any) => b.type)).toEqual(["thinking", "text", "tool_use"]);
  });
});

describe("encrypted_content visibility", () => {
  it("store on and no include: reasoning items carry no encrypted_content (JSON and stream)", async () => {
    const p = { model: CLAUDE, input: "Hi", reasoning: { effort: "low" as const }, max_output_tokens: 4000 };
    for (const r of [await client.responses.create(p), await client.responses.stream(p).finalResponse()]) {
      expect(r.output[0]!.type).toBe("reasoning");
      expect(r.output[0]).not.toHaveProperty("encrypted_content");
    }
  });

  it("a stream with include has encrypted_content in response.output_item.done and in response.completed", async () => {
    const stream = client.responses.stream({ model: CLAUDE, input: "Hi", reasoning: { effort: "low" }, max_output_tokens: 4000, include: ["reasoning.encrypted_content"] });
    const done: OpenAI.Responses.ResponseOutputItem[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const e of stream) {
      if (e.type === "response.output_item.done") done.push(e.item);
      if (e.type === "response.completed") completed = e.response;
    }
    const enc = (done[0] as OpenAI.Responses.ResponseReasoningItem).encrypted_content;
    expect(enc).toMatch(/^mgr1\./);
    expect((completed!.output[0] as OpenAI.Responses.ResponseReasoningItem).encrypted_content).toBe(enc);
  });
});

describe.each([false, true])("Gemini thought signatures across a tool loop (stream=%s)", (streamed) => {
  it("thought text is the reasoning summary; the functionCall goes back with its thoughtSignature", async () => {
    const base = { model: GEMINI, tools, reasoning: { effort: "low" as const, summary: "auto" as const }, store: false, include: ["reasoning.encrypted_content" as const] };
    const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: "Weather in Paris?" }];
    const first = await create(streamed, { ...base, input });
    expect(gemini.requests.at(-1)!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 1024, includeThoughts: true });
    expect(first.output[0]).toMatchObject({ type: "reasoning", summary: [{ type: "summary_text", text: "Thinking it over." }] });
    const calls = first.output.filter((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall[];
    expect(calls.length).toBeGreaterThan(0);
    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]));
    for (const c of calls) input.push({ type: "function_call_output", call_id: c.call_id, output: "21C" });

    const second = await create(streamed, { ...base, input });
    expect(second.output_text).toBe("The weather is sunny.");
    const contents = gemini.requests.at(-1)!.body.contents;
    const model = contents.find((c: any) => c.role === "model");
    expect(model.parts[0]).toEqual({ functionCall: { name: "get_weather", args: { city: "Paris", unit: "celsius" } }, thoughtSignature: "CiQB+/8BAgP+EA==" });
  });
});

describe("input_file", () => {
  const pdf = Buffer.from("%PDF-1.4 fake").toString("base64");

  it("a PDF as file_data (data: URL, or base64 with a filename) or file_url reaches Anthropic as a document block", async () => {
    await client.responses.create({ model: CLAUDE, input: [{ role: "user", content: [
      { type: "input_text", text: "Summarise these." },
      { type: "input_file", file_data: `data:application/pdf;base64,${pdf}`, filename: "a.pdf" },
      { type: "input_file", file_data: pdf, filename: "b.pdf" },
      { type: "input_file", file_url: "https://example.com/c.pdf" },
    ] }] });
    const content = claude.requests.at(-1)!.body.messages[0].content;
    expect(content).toEqual([
      { type: "text", text: "Summarise these." },
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: pdf } },
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: pdf } },
      { type: "document", source: { type: "url", url: "https://example.com/c.pdf" } },
    ]);
  });

  it("a PDF reaches Gemini as inlineData; file_id is a 400 naming the field (no Files API behind a translated upstream)", async () => {
    await client.responses.create({ model: GEMINI, input: [{ role: "user", content: [{ type: "input_file", file_data: pdf, filename: "a.pdf" }] }] });
    expect(gemini.requests.at(-1)!.body.contents[0].parts).toEqual([{ inlineData: { mimeType: "application/pdf", data: pdf } }]);
    const before = claude.requests.length;
    const err = await client.responses.create({ model: CLAUDE, input: [{ role: "user", content: [{ type: "input_file", file_id: "file-abc" }] }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ param: "input[0].content[0].file_id" });
    expect(claude.requests.length).toBe(before);
  });
});

describe("request fields the SDKs send", () => {
  it("tool_choice allowed_tools narrows the tools the upstream sees; an assistant refusal part sent back validates", async () => {
    const more: OpenAI.Responses.FunctionTool[] = [...tools, { type: "function", name: "get_time", strict: false, parameters: { type: "object", properties: {} } }];
    const r = await client.responses.create({
      model: CLAUDE, tools: more, tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "get_time" }] },
      input: [
        { role: "user", content: "Something bad" },
        { type: "message", role: "assistant", status: "completed", id: "msg_1", content: [{ type: "refusal", refusal: "I can't help with that." }] },
        { role: "user", content: "What time is it?" },
      ],
    });
    const sent = claude.requests.at(-1)!.body;
    expect(sent.tools.map((t: any) => t.name)).toEqual(["get_time"]);
    expect(sent.tool_choice).toEqual({ type: "any" });
    expect(r.output.map((o) => o.type)).toEqual(["function_call"]);
    expect((r.output[0] as OpenAI.Responses.ResponseFunctionToolCall).name).toBe("get_time");
    expect(r.tool_choice).toEqual({ type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "get_time" }] });
  });

  it("reasoning.effort xhigh and none reach Gemini's thinkingConfig", async () => {
    await client.responses.create({ model: GEMINI, input: "Hi", reasoning: { effort: "xhigh" } });
    expect(gemini.requests.at(-1)!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 8192 });
    await client.responses.create({ model: GEMINI, input: "Hi", reasoning: { effort: "none" } });
    expect(gemini.requests.at(-1)!.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 });
  });
});

describe("an upstream failure mid-stream", () => {
  it("response.failed with the output so far, then the error event, numbered on from the stream", async () => {
    claude.failures.push({ kind: "error-event", afterEvents: 6 });
    const res = await fetch(`${gw.baseURL}/responses`, {
      method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: CLAUDE, input: "Hi", stream: true }),
    });
    expect(res.status).toBe(200);
    const events = (await res.text()).split("\n\n").filter(Boolean).map((frame) => {
      const [name, data] = frame.split("\n");
      return { name: name!.slice("event: ".length), data: JSON.parse(data!.slice("data: ".length)) };
    });
    expect(events.every((e) => e.name === e.data.type)).toBe(true);
    for (const e of events) expectOpenAIResponseEvent(e.data);
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.slice(-2).map((e) => e.name)).toEqual(["response.failed", "error"]);
    const failed = events.at(-2)!.data.response;
    expect(failed).toMatchObject({ status: "failed", error: { code: "server_error", message: expect.any(String) } });
    expect(failed.output).toEqual([expect.objectContaining({ type: "message", status: "incomplete" })]);
    expect(events.at(-1)!.data).toMatchObject({ code: expect.stringMatching(/UPSTREAM|OVERLOADED/), message: expect.any(String) });
  });
});
