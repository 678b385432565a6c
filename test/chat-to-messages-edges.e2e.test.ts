// Chat, Responses and Gemini clients in front of an Anthropic model, through the chat -> messages translator, on the
// cases its streaming and request mapping once got wrong. The fake Anthropic here answers exactly the frames the real
// API sends for them (reference §2.4) and refuses what the real API refuses.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenLoopback, readRequest, type Loopback, type Recorded } from "./upstreams/http-fake.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { assemble, geminiClient, type GeminiClient } from "./helpers/gemini-client.ts";

const LIVE = testKey("c2m-edges");
const model = "anthropic/claude-edges";
let upstream: Loopback;
const requests: Recorded[] = [];
let gw: TestGateway;
let client: OpenAI;
let gemini: GeminiClient;

type Block = Record<string, unknown> & { type: string };
interface Answer { content: Block[]; stop_reason: string; stop_details?: Record<string, unknown> }

/** What the fake model answers: the scenario is named in the conversation's text. */
function answer(body: any): Answer {
  const text = JSON.stringify(body.messages);
  if (text.includes("REFUSE")) return { content: [], stop_reason: "refusal", stop_details: { type: "refusal", category: "cyber", explanation: "Refused." } };
  if (text.includes("NOARG")) return { content: [{ type: "tool_use", id: "toolu_noarg", name: "get_time", input: {} }], stop_reason: "tool_use" };
  return { content: [{ type: "text", text: "Done." }], stop_reason: "end_turn" };
}

/** The real API's refusal of a tool history without tools. */
function invalid(body: any): string | undefined {
  const blocks = (body.messages ?? []).flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
  if (blocks.some((b: any) => b.type === "tool_use" || b.type === "tool_result") && !(Array.isArray(body.tools) && body.tools.length)) {
    return "Requests which include `tool_use` or `tool_result` blocks must define tools.";
  }
  return undefined;
}

async function handle(req: IncomingMessage, res: ServerResponse) {
  const rec = await readRequest(req);
  requests.push(rec);
  const body = rec.body;
  const bad = invalid(body);
  if (bad) {
    res.writeHead(400, { "content-type": "application/json" });
    return res.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: bad } }));
  }
  const a = answer(body);
  const usage = { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 5 };
  const base = { id: "msg_edges", type: "message", role: "assistant", model: body.model };
  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify({ ...base, content: a.content, stop_reason: a.stop_reason, stop_sequence: null, ...(a.stop_details ? { stop_details: a.stop_details } : {}), usage }));
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (type: string, data: Record<string, unknown> = {}) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send("message_start", { message: { ...base, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  send("ping");
  a.content.forEach((b, index) => {
    if (b.type === "text") {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      send("content_block_delta", { index, delta: { type: "text_delta", text: b.text } });
    } else {
      send("content_block_start", { index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } });
      // A tool without arguments: the only input_json_delta is empty (as the real API streams it).
      send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } });
    }
    send("content_block_stop", { index });
  });
  // A refusal streams no content blocks; its stop_details ride in message_delta's delta (as the Anthropic SDK reads them).
  send("message_delta", { delta: { stop_reason: a.stop_reason, stop_sequence: null, ...(a.stop_details ? { stop_details: a.stop_details } : {}) }, usage });
  send("message_stop");
  res.end();
}

beforeAll(async () => {
  upstream = await listenLoopback((req, res) => void handle(req, res));
  gw = await startTestGateway({
    providers: { claude: { protocol: "anthropic", base_url: upstream.origin, api_key: "sk-ant-fake" } },
    models: { [model]: { type: "language", tags: ["tool-use", "reasoning"], max_tokens: 8192, endpoints: [{ provider: "claude", model: "claude-edges-1", pricing: { input: "0.000003", output: "0.000015" } }] } },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
  client = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0 });
  gemini = geminiClient(`${gw.url}/api`, LIVE);
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const strictTools: OpenAI.ChatCompletionTool[] = [
  { type: "function", function: { name: "get_time", strict: true, parameters: { type: "object", properties: {}, required: [], additionalProperties: false } } },
];

describe("a tool called without arguments, streamed", () => {
  it("chat: arguments \"{}\", which the openai stream helper parses for a strict tool", async () => {
    const s = client.chat.completions.stream({ model, messages: [{ role: "user", content: "Time? NOARG" }], tools: strictTools });
    const done = await s.finalChatCompletion();
    const call = done.choices[0]!.message.tool_calls![0]! as any;
    expect(call.function.arguments).toBe("{}");
    expect(call.function.parsed_arguments).toEqual({});
    expect(done.choices[0]!.finish_reason).toBe("tool_calls");
  });

  it("Responses: the function_call's arguments are \"{}\" in the final response", async () => {
    const s = client.responses.stream({ model, input: "Time? NOARG", tools: [{ type: "function", name: "get_time", strict: true, parameters: { type: "object", properties: {}, required: [], additionalProperties: false } }] });
    const done = await s.finalResponse();
    const call = done.output.find((o) => o.type === "function_call") as any;
    expect(call.arguments).toBe("{}");
  });

  it("Gemini: the functionCall has empty args", async () => {
    const events = await gemini.stream(model, { contents: [{ role: "user", parts: [{ text: "Time? NOARG" }] }], tools: [{ functionDeclarations: [{ name: "get_time", parameters: { type: "OBJECT", properties: {} } }] }] });
    const { parts } = assemble(events);
    expect(parts.find((p) => p.functionCall)?.functionCall).toMatchObject({ name: "get_time", args: {} });
  });
});

describe("tool_choice none after a tool loop (a final answer forced)", () => {
  const last = () => requests.at(-1)!.body;
  const sent = () => ({ tools: last().tools?.map((t: any) => t.name), tool_choice: last().tool_choice });

  it("chat: the tools go with {type: none}, so Anthropic accepts the tool history", async () => {
    const res = await client.chat.completions.create({
      model, tool_choice: "none",
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }],
      messages: [
        { role: "user", content: "weather?" },
        { role: "assistant", content: null, tool_calls: [{ id: "toolu_1", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "toolu_1", content: "sunny" },
        { role: "user", content: "summarise" },
      ],
    });
    expect(res.choices[0]!.message.content).toBe("Done.");
    expect(sent()).toEqual({ tools: ["get_weather"], tool_choice: { type: "none" } });
  });

  it("Responses: tool_choice none reaches Anthropic the same way", async () => {
    const res = await client.responses.create({
      model, tool_choice: "none",
      tools: [{ type: "function", name: "get_weather", strict: false, parameters: { type: "object", properties: {} } }],
      input: [
        { role: "user", content: "weather?" },
        { type: "function_call", call_id: "toolu_1", name: "get_weather", arguments: "{}" },
        { type: "function_call_output", call_id: "toolu_1", output: "sunny" },
        { role: "user", content: "summarise" },
      ],
    });
    expect(res.output_text).toBe("Done.");
    expect(sent()).toEqual({ tools: ["get_weather"], tool_choice: { type: "none" } });
  });

  it("Gemini: functionCallingConfig mode NONE reaches Anthropic the same way", async () => {
    const res = await gemini.generate(model, {
      contents: [
        { role: "user", parts: [{ text: "weather?" }] },
        { role: "model", parts: [{ functionCall: { name: "get_weather", args: {} } }] },
        { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { output: "sunny" } } }] },
        { role: "user", parts: [{ text: "summarise" }] },
      ],
      tools: [{ functionDeclarations: [{ name: "get_weather", parameters: { type: "OBJECT", properties: {} } }] }],
      toolConfig: { functionCallingConfig: { mode: "NONE" } },
    });
    expect(res.candidates[0].content.parts[0].text).toBe("Done.");
    expect(sent()).toEqual({ tools: ["get_weather"], tool_choice: { type: "none" } });
  });
});

describe("thinking dropped for a tool loop that lost it: the client's output limit is kept", () => {
  const last = () => requests.at(-1)!.body;

  it("chat: max_tokens 500 with reasoning_effort high reaches Anthropic as 500, without thinking", async () => {
    const { data, response } = await client.chat.completions.create({
      model, max_tokens: 500, reasoning_effort: "high",
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: {} } } }],
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: null, tool_calls: [{ id: "toolu_1", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "toolu_1", content: "ok" },
      ],
    }).withResponse();
    expect(data.choices[0]!.message.content).toBe("Done.");
    expect(response.headers.get("x-mg-dropped-params")).toContain("reasoning_effort");
    expect(last().thinking).toBeUndefined();
    expect(last().max_tokens).toBe(500);
  });

  it("Gemini: maxOutputTokens 500 with a thinkingBudget reaches Anthropic as 500, without thinking", async () => {
    await gemini.generate(model, {
      contents: [
        { role: "user", parts: [{ text: "hi" }] },
        { role: "model", parts: [{ functionCall: { name: "f", args: {} } }] },
        { role: "user", parts: [{ functionResponse: { name: "f", response: { output: "ok" } } }] },
      ],
      tools: [{ functionDeclarations: [{ name: "f", parameters: { type: "OBJECT", properties: {} } }] }],
      generationConfig: { maxOutputTokens: 500, thinkingConfig: { thinkingBudget: 2048 } },
    });
    expect(last().thinking).toBeUndefined();
    expect(last().max_tokens).toBe(500);
  });
});

describe("a refusal, streamed, carries the explanation the non-streaming answer has", () => {
  it("chat: message.refusal in the stream helper's final completion, finish_reason content_filter", async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "REFUSE" }];
    const plain = await client.chat.completions.create({ model, messages });
    expect(plain.choices[0]!.message.refusal).toBe("Refused.");
    const done = await client.chat.completions.stream({ model, messages }).finalChatCompletion();
    expect(done.choices[0]!.message.refusal).toBe("Refused.");
    expect(done.choices[0]!.finish_reason).toBe("content_filter");
  });

  it("Responses: the final response holds the same refusal content part as the non-streaming one", async () => {
    const plain = await client.responses.create({ model, input: "REFUSE" });
    const refusal = (r: OpenAI.Responses.Response) => r.output.flatMap((o: any) => (o.type === "message" ? o.content : [])).filter((c: any) => c.type === "refusal");
    expect(refusal(plain)).toEqual([{ type: "refusal", refusal: "Refused." }]);
    const done = await client.responses.stream({ model, input: "REFUSE" }).finalResponse();
    expect(refusal(done)).toEqual([expect.objectContaining({ type: "refusal", refusal: "Refused." })]); // the SDK adds parsed: null
  });
});
