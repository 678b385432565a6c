// Parallel tool calls whose argument fragments interleave by index, from an OpenAI-chat upstream (reference §1.5:
// consumers key fragments by `index`; id and name come once, on each index's first fragment), through the gateway's
// stream translators to the official SDKs: the openai client on /v1/responses (responses-to-chat/stream.ts) and the
// Anthropic client on /v1/messages (messages-to-chat/stream.ts). The fake
// writes the exact frames an audit used: two calls opened, then call 0's arguments in 3-character fragments with
// call 1's "{}" after the third.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

const KEY = testKey("interleaved-tools");
const MODEL = "openai/gpt-4o-mini";
const ARGS = '{"city": "São Paulo", "note": "", "q": "a\\"b\\\\c\\n", "nested": {"a": [1, 2.5, null, true]}, "emoji": "👋🏽", "cjk": "世界"}';
let up: FakeOpenAI;
let gw: TestGateway;

/** The chat chunks of the interleaved answer ("Sure", then the two calls), the finish and usage chunks. */
function interleaved(model: string): unknown[] {
  const base = { id: "chatcmpl-interleave", object: "chat.completion.chunk", created: 1770000000, model, system_fingerprint: "fp_fake" };
  const chunk = (delta: unknown, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null });
  const pieces = ARGS.match(/[\s\S]{1,3}/gu)!;
  return [
    chunk({ role: "assistant", content: "", refusal: null }), chunk({ content: "Sur" }), chunk({ content: "e" }),
    chunk({ tool_calls: [{ index: 0, id: "call_A1", type: "function", function: { name: "get_weather", arguments: "" } }] }),
    chunk({ tool_calls: [{ index: 1, id: "call_B2", type: "function", function: { name: "get_time", arguments: "" } }] }),
    ...pieces.flatMap((p, k) => [chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] }), ...(k === 2 ? [chunk({ tool_calls: [{ index: 1, function: { arguments: "{}" } }] })] : [])]),
    chunk({}, "tool_calls"),
    { ...base, choices: [], usage: { prompt_tokens: 50, completion_tokens: 30, total_tokens: 80 } },
  ];
}

beforeAll(async () => {
  up = await startFakeOpenAI();
  up.hook = (rec, res) => {
    if (!rec.body?.stream || !JSON.stringify(rec.body.messages).includes("SCN:interleave")) return false;
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(interleaved(rec.body.model).map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n");
    return true;
  };
  gw = await startTestGateway({
    providers: { up: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" } },
    models: { [MODEL]: { type: "language", endpoints: [{ provider: "up", model: "gpt-4o-mini", pricing: { input: "0.00000015", output: "0.0000006" } }] } },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

describe("Responses client <- interleaved parallel tool calls", () => {
  it("responses.stream().finalResponse(): two function calls, each with its own whole arguments (strict ones parsed)", async () => {
    // Every event is also checked against OpenAI's own description of the stream.
    const shapes = openAIShapeChecker();
    const client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
    const stream = client.responses.stream({
      model: MODEL, input: "Weather and time? SCN:interleave", store: false,
      tools: [
        { type: "function", name: "get_weather", strict: true, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false } },
        { type: "function", name: "get_time", strict: true, parameters: { type: "object", properties: {}, additionalProperties: false } },
      ],
    });
    const doneArgs = new Map<string, string>();
    stream.on("response.function_call_arguments.done", (e) => doneArgs.set(e.item_id, e.arguments));
    const final = await stream.finalResponse();
    expect(final.status).toBe("completed");
    const calls = final.output.filter((o) => o.type === "function_call");
    expect(calls.map((o) => [o.call_id, o.name, o.arguments, o.parsed_arguments])).toEqual([
      ["call_A1", "get_weather", ARGS, JSON.parse(ARGS)],
      ["call_B2", "get_time", "{}", {}],
    ]);
    expect(final.output_text).toBe("Sure");
    expect(calls.map((o) => doneArgs.get(o.id!))).toEqual([ARGS, "{}"]);
    await shapes.check();
  });
});

describe("Messages client <- interleaved parallel tool calls", () => {
  it("messages.stream(): one block at a time; each tool_use block has its whole input when it stops (contentBlock)", async () => {
    const client = new Anthropic({ apiKey: KEY, baseURL: gw.baseURL.replace(/\/v1$/, ""), maxRetries: 0 });
    const stream = client.messages.stream({
      model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "Weather and time? SCN:interleave" }],
      tools: [{ name: "get_weather", input_schema: { type: "object" } }, { name: "get_time", input_schema: { type: "object" } }],
    });
    const atStop: unknown[] = [];
    stream.on("contentBlock", (b) => atStop.push(structuredClone(b)));
    const events: Anthropic.MessageStreamEvent[] = [];
    stream.on("streamEvent", (e) => events.push(e));
    const final = await stream.finalMessage();
    const tools = [
      { type: "tool_use", id: "call_A1", name: "get_weather", input: JSON.parse(ARGS) },
      { type: "tool_use", id: "call_B2", name: "get_time", input: {} },
    ];
    expect(final.stop_reason).toBe("tool_use");
    expect(final.content).toEqual([expect.objectContaining({ type: "text", text: "Sure" }), ...tools.map((t) => expect.objectContaining(t))]);
    expect(atStop).toEqual(final.content);
    // No block gets a delta outside its start..stop.
    let open = -1;
    for (const e of events) {
      if (e.type === "content_block_start") open = e.index;
      else if (e.type === "content_block_delta") expect(e.index).toBe(open);
      else if (e.type === "content_block_stop") {
        expect(e.index).toBe(open);
        open = -1;
      }
    }
  });
});
