// JSON mode beside tools on Claude through the Anthropic API, on the gateway as shipped (SQLite, the default pipeline, a
// key with a budget and rate limits): a chat client (and a Responses client, translated through chat) that sends
// response_format / text.format with its tools, as the OpenAI Agents SDK does for an agent with tools and an
// output_type, got a 400 "response_format together with tools is not supported". Now the model calls the client's tool
// first and, once its result is back, answers the JSON as the message content: in a JSON answer and in a stream alike.
// With tool_choice required only the client's tools are offered (an answer without a call of theirs is not allowed).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { randomUUID } from "node:crypto";
import { SHIPPED_KEY, SHIPPED_PROJECT, startShipped, within, type Shipped } from "./helpers/shipped-config.ts";

const CLAUDE = "anthropic/claude-sonnet-4.5";
const schema = { type: "object", properties: { summary: { type: "string" }, celsius: { type: "number" } }, required: ["summary", "celsius"], additionalProperties: false };
const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
const response_format = { type: "json_schema" as const, json_schema: { name: "report", schema } };
const ask: OpenAI.ChatCompletionMessageParam = { role: "user", content: "What is the weather in Paris? Answer as a report." };

let s: Shipped;
let oai: OpenAI;

beforeAll(async () => {
  s = await startShipped();
  oai = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: s.gw.baseURL, maxRetries: 0 });
});
afterAll(() => s?.close());

/** The upstream call the last request made: its tool names and tool_choice. */
const sent = () => {
  const body = s.anthropic.requests.at(-1)!.body;
  return { tools: body.tools.map((t: any) => t.name), tool_choice: body.tool_choice };
};
const ledgerOf = async (id: string) => (await s.gw.gateway.store.ledger({ project: SHIPPED_PROJECT })).filter((e) => e.requestId === id);

/** A chat stream read to its end, folded as a client does: content, tool calls by index, the finish reason. */
async function streamed(messages: OpenAI.ChatCompletionMessageParam[]) {
  const stream = await oai.chat.completions.create({ model: CLAUDE, messages, tools, response_format, stream: true });
  let content = "";
  const calls: { id: string; name: string; arguments: string }[] = [];
  const finish: string[] = [];
  await within((async () => {
    for await (const c of stream) {
      const choice = c.choices[0];
      if (!choice) continue;
      content += choice.delta.content ?? "";
      for (const t of choice.delta.tool_calls ?? []) {
        calls[t.index] ??= { id: t.id!, name: t.function!.name!, arguments: "" };
        calls[t.index]!.arguments += t.function?.arguments ?? "";
      }
      if (choice.finish_reason) finish.push(choice.finish_reason);
    }
  })(), 10_000, "chat stream");
  return { content, calls, finish };
}

describe("JSON beside tools on Claude (Anthropic), the gateway as shipped", () => {
  it("chat JSON: a tool call first, then the JSON report as content, each billed once", async () => {
    const first = await oai.chat.completions.create({ model: CLAUDE, messages: [ask], tools, response_format }, { headers: { "x-request-id": `jbt-1-${randomUUID()}` } }).withResponse();
    const m1 = first.data.choices[0]!;
    expect(m1.finish_reason).toBe("tool_calls");
    expect(m1.message.content).toBeNull();
    const call = m1.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(m1.message.tool_calls!.map((c) => (c as OpenAI.ChatCompletionMessageFunctionToolCall).function.name)).toEqual(["get_weather"]);
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "Paris", unit: "celsius" });
    expect(sent()).toEqual({ tools: ["get_weather", "json_output"], tool_choice: { type: "any" } });

    const id = `jbt-2-${randomUUID()}`;
    const second = await oai.chat.completions.create({
      model: CLAUDE, tools, response_format,
      messages: [ask, m1.message as OpenAI.ChatCompletionMessageParam, { role: "tool", tool_call_id: call.id, content: "sunny, 21 C" }],
    }, { headers: { "x-request-id": id } });
    const m2 = second.choices[0]!;
    expect(m2.finish_reason).toBe("stop");
    expect(m2.message.tool_calls).toBeUndefined();
    expect(JSON.parse(m2.message.content!)).toEqual({ summary: "sample", celsius: 4.5 });
    const [record, more] = await ledgerOf(id);
    expect(more).toBeUndefined();
    expect(record).toMatchObject({ provider: "anthropic", outcome: "ok", inputTokens: second.usage!.prompt_tokens, outputTokens: second.usage!.completion_tokens });
  });

  it("streamed: the same two turns, the tool call as tool_call deltas, the report as content deltas", async () => {
    const first = await streamed([ask]);
    expect(first.finish).toEqual(["tool_calls"]);
    expect(first.content).toBe("");
    expect(first.calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([["get_weather", { city: "Paris", unit: "celsius" }]]);
    const call = first.calls[0]!;
    const second = await streamed([
      ask,
      { role: "assistant", content: null, tool_calls: [{ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }] },
      { role: "tool", tool_call_id: call.id, content: "sunny, 21 C" },
    ]);
    expect(second.finish).toEqual(["stop"]);
    expect(second.calls).toEqual([]);
    expect(JSON.parse(second.content)).toEqual({ summary: "sample", celsius: 4.5 });
  });

  it("a Responses client (openai SDK responses.create, text.format json_schema + a function tool): a function_call, then the JSON as output_text", async () => {
    const fn: OpenAI.Responses.FunctionTool = { type: "function", name: "get_weather", strict: false, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };
    const text = { format: { type: "json_schema" as const, name: "report", schema, strict: false } };
    const first = await oai.responses.create({ model: CLAUDE, input: "What is the weather in Paris? Answer as a report.", tools: [fn], text, store: false });
    const call = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ name: "get_weather" });
    expect(first.output.some((o) => o.type === "message")).toBe(false);
    expect(sent()).toEqual({ tools: ["get_weather", "json_output"], tool_choice: { type: "any" } });

    const second = await oai.responses.create({
      model: CLAUDE, tools: [fn], text, store: false,
      input: [
        { role: "user", content: "What is the weather in Paris? Answer as a report." },
        { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: "function_call_output", call_id: call.call_id, output: "sunny, 21 C" },
      ],
    });
    expect(second.output.some((o) => o.type === "function_call")).toBe(false);
    expect(JSON.parse(second.output_text)).toEqual({ summary: "sample", celsius: 4.5 });
  });

  it("tool_choice required (chat, and Responses \"required\"): Claude is offered only the client's tools, so it cannot answer the JSON instead of calling one", async () => {
    const history: OpenAI.ChatCompletionMessageParam[] = [
      ask,
      { role: "assistant", content: null, tool_calls: [{ id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      { role: "tool", tool_call_id: "toolu_1", content: "sunny, 21 C" },
    ];
    // (What the fake model then answers is not asserted: after a tool result it answers prose even with any.)
    await oai.chat.completions.create({ model: CLAUDE, messages: history, tools, tool_choice: "required", response_format });
    expect(sent()).toEqual({ tools: ["get_weather"], tool_choice: { type: "any" } });

    const fn: OpenAI.Responses.FunctionTool = { type: "function", name: "get_weather", strict: false, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };
    await oai.responses.create({ model: CLAUDE, input: "What is the weather in Paris? Answer as a report.", tools: [fn], tool_choice: "required", text: { format: { type: "json_schema", name: "report", schema, strict: false } }, store: false });
    expect(sent()).toEqual({ tools: ["get_weather"], tool_choice: { type: "any" } });
  });
});
