// A chat upstream (OpenAI, or a Converse one through the same translation) whose streamed tool-call arguments end as
// something other than a JSON object (`{"city": "Par`, a model that broke off), through the gateway to the official
// Anthropic SDK's messages.stream(). The SDK joins a tool_use block's input_json_delta fragments and parses the join at
// the block's stop; before, the fragments went out as they came and finalMessage() gave `input: {}` (a stray `}` made
// it throw), where the same answer as JSON gives `{rawInvalidInput: "<arguments>"}`. Now the join is an object that
// carries the arguments in rawInvalidInput; whole arguments in the same answer still come out as they were.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import type { FakeOpenAI } from "./upstreams/openai.ts";
import { chatChunks } from "./upstreams/openai-scripted-stream.ts";
import { testKey, type TestGateway } from "./helpers/gateway.ts";
import { startScriptedChatGateway } from "./helpers/scripted-chat-gateway.ts";

const KEY = testKey("messages-args-invalid");
const MODEL = "t/broken-args";
const BROKEN = '{"city": "Par';
const NOT_JSON = "{'city': 'Paris'}";
const WHOLE = '{"tz": "Europe/Paris"}';
let up: FakeOpenAI;
let gw: TestGateway;

/** The calls of an answer: asked "[whole]", only the whole one; else broken off, single-quoted, whole. */
const callsFor = (body: any): Array<[string, string, string]> =>
  JSON.stringify(body.messages).includes("[whole]")
    ? [["call_W3", "get_time", WHOLE]]
    : [["call_B1", "get_weather", BROKEN], ["call_Q2", "get_weather", NOT_JSON], ["call_W3", "get_time", WHOLE]];

/** The calls one after another, each in five-character fragments. */
function streamed(body: any): unknown[] {
  const { chunk, args, usage } = chatChunks("chatcmpl-invalid", body.model);
  return [
    chunk({ role: "assistant", content: null }),
    ...callsFor(body).flatMap(([id, name, json], index) => [
      chunk({ tool_calls: [{ index, id, type: "function", function: { name, arguments: "" } }] }),
      ...(json.match(/[\s\S]{1,5}/g) ?? []).map((a) => args(a, index)),
    ]),
    chunk({}, "tool_calls"),
    usage,
  ];
}

beforeAll(async () => {
  ({ up, gw } = await startScriptedChatGateway(KEY, { [MODEL]: "broken-args" }, (rec) => streamed(rec.body)));
  // The same answer as JSON, for the JSON path's input to compare with.
  const scripted = up.hook!;
  up.hook = (rec, res) => {
    if (rec.body?.stream) return scripted(rec, res);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({
      id: "chatcmpl-invalid", object: "chat.completion", created: 1770000000, model: rec.body.model,
      choices: [{ index: 0, finish_reason: "tool_calls", message: { role: "assistant", content: null, tool_calls: callsFor(rec.body).map(([id, name, json]) => ({ id, type: "function", function: { name, arguments: json } })) } }],
      usage: { prompt_tokens: 40, completion_tokens: 25, total_tokens: 65 },
    }));
    return true;
  };
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

describe("Messages client <- streamed tool arguments that are not a JSON object", () => {
  const client = () => new Anthropic({ apiKey: KEY, baseURL: gw.baseURL.replace(/\/v1$/, ""), maxRetries: 0 });
  const ask = {
    model: MODEL, max_tokens: 200, messages: [{ role: "user" as const, content: "Weather and time in Paris?" }],
    tools: [
      { name: "get_weather", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } },
      { name: "get_time", input_schema: { type: "object" as const, properties: { tz: { type: "string" } } } },
    ],
  };

  it("finalMessage(): a broken call's input carries its arguments in rawInvalidInput, as the JSON answer's does", async () => {
    const final = await client().messages.stream(ask).finalMessage();
    const json = await client().messages.create(ask);
    expect(final.stop_reason).toBe("tool_use");
    const tools = final.content.filter((b) => b.type === "tool_use");
    const jsonTools = json.content.filter((b) => b.type === "tool_use");
    expect(tools.map((b) => b.id)).toEqual(["call_B1", "call_Q2", "call_W3"]);
    // The JSON answer, for reference: the arguments as they came, in rawInvalidInput.
    expect(jsonTools.map((b) => b.input)).toEqual([{ rawInvalidInput: BROKEN }, { rawInvalidInput: NOT_JSON }, { tz: "Europe/Paris" }]);
    // Streamed, the broken call's first member had gone out before the arguments broke off; the rest is the same.
    expect(tools[0]!.input).toEqual({ city: "Par", rawInvalidInput: BROKEN });
    expect(tools[1]!.input).toEqual({ rawInvalidInput: NOT_JSON });
    expect(tools[2]!.input).toEqual({ tz: "Europe/Paris" });
  });

  it("the whole call's arguments still stream as they come: several input_json_delta before its block stops", async () => {
    const stream = client().messages.stream({ ...ask, messages: [{ role: "user", content: "Time in Paris? [whole]" }] });
    const deltas: Record<number, string[]> = {};
    stream.on("streamEvent", (e) => {
      if (e.type === "content_block_delta" && e.delta.type === "input_json_delta") (deltas[e.index] ??= []).push(e.delta.partial_json);
    });
    await stream.finalMessage();
    expect(deltas[0]!.length).toBeGreaterThan(2);
    expect(deltas[0]!.join("")).toBe(WHOLE);
  });
});
