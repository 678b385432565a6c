// The next turn of a tool loop after an interleaved answer, to an OpenAI-strict chat host in DeepSeek's thinking mode
// (test/upstreams/openai-checks.ts refuses, as the real API does, an assistant message with tool_calls not followed by
// its tool messages; openai-reasoning.ts, as DeepSeek does, a tool-call turn of the current loop without its
// reasoning_content). Turn 1 streams a call, reasoning between its fragments, a second call, text, the rest of both
// calls: the Responses output is [function_call, reasoning, function_call, message]. Turn 2 sends the two outputs back,
// chained by previous_response_id or with the whole output echoed back as Codex does (store: false): the host must get
// the turn as one assistant message (its text, both calls and its reasoning) with the tool messages right after, and
// answer. A JSON turn 1 (reasoning, then a call) is continued the same way.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import type { FakeOpenAI } from "./upstreams/openai.ts";
import { chatChunks } from "./upstreams/openai-scripted-stream.ts";
import { toolsAnswered } from "./upstreams/openai-checks.ts";
import { reasoningFor } from "./upstreams/openai-reasoning.ts";
import { testKey, type TestGateway } from "./helpers/gateway.ts";
import { startScriptedChatGateway } from "./helpers/scripted-chat-gateway.ts";
import { functionCallOutputs } from "./helpers/responses-fixtures.ts";

const KEY = testKey("responses-interleaved-turns");
const MODEL = "deepseek/deepseek-reasoner";
let up: FakeOpenAI;
let gw: TestGateway;
let client: OpenAI;

/** Turn 1's chunks: calls A and B, with reasoning and text between their argument fragments. */
function interleaved(model: string): unknown[] {
  const { chunk, args, usage } = chatChunks("chatcmpl-interleaved", model);
  return [
    chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_A", type: "function", function: { name: "get_weather", arguments: "{\"city\":" } }] }),
    chunk({ reasoning_content: "And the time there." }),
    chunk({ tool_calls: [{ index: 1, id: "call_B", type: "function", function: { name: "get_time", arguments: "{\"tz\":" } }] }),
    chunk({ content: "Let me check. " }),
    args("\"Paris\"}", 0),
    chunk({ content: "More text." }),
    args("\"CET\"}", 1),
    chunk({}, "tool_calls"),
    usage,
  ];
}

/** Codex asks for reasoning: DeepSeek then thinks, and wants the thinking back within the tool loop. */
const reasoning = { effort: "medium" } as const;

const tools: OpenAI.Responses.Tool[] = [
  { type: "function", name: "get_weather", strict: false, parameters: { type: "object", properties: { city: { type: "string" } } } },
  { type: "function", name: "get_time", strict: false, parameters: { type: "object", properties: { tz: { type: "string" } } } },
];

beforeAll(async () => {
  // Turn 1 is the interleaved stream; a turn with tool results goes through the fake's checks and is answered.
  // The fake listens on loopback: the provider names DeepSeek's convention, as api.deepseek.com would give it.
  ({ up, gw } = await startScriptedChatGateway(KEY, { [MODEL]: "deepseek-reasoner" },
    (rec) => toolsAnswered(rec.body.messages) ? undefined : interleaved(rec.body.model), { reasoning_field: "reasoning_content" }));
  up.reasoning = "reasoning_content";
  client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

/** What the host got for the turn: the messages after the user's. */
const sentTurn = () => up.requests.at(-1)!.body.messages.slice(1);

describe("Responses client on a chat host: the turn after an interleaved answer", () => {
  const first = async (store: boolean) => {
    const r1 = await client.responses.stream({ model: MODEL, input: "Weather and time in Paris?", tools, store, reasoning }).finalResponse();
    expect(r1.output.map((o) => o.type)).toEqual(["function_call", "reasoning", "function_call", "message"]);
    return r1;
  };
  const expectOneTurn = () => {
    expect(sentTurn()).toEqual([
      {
        role: "assistant", content: "Let me check. More text.", reasoning_content: "And the time there.",
        tool_calls: [
          { id: "call_A", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } },
          { id: "call_B", type: "function", function: { name: "get_time", arguments: "{\"tz\":\"CET\"}" } },
        ],
      },
      { role: "tool", tool_call_id: "call_A", content: "result of get_weather" },
      { role: "tool", tool_call_id: "call_B", content: "result of get_time" },
    ]);
  };

  it("chained by previous_response_id: the host gets one assistant message with the text and both calls, and answers", async () => {
    const r1 = await first(true);
    const r2 = await client.responses.create({ model: MODEL, previous_response_id: r1.id, input: functionCallOutputs(r1), tools, reasoning });
    expect(r2.status).toBe("completed");
    expect(r2.output_text).not.toBe("");
    expectOneTurn();
  });

  it("the output echoed back (Codex, store: false): the same one message, and an answer", async () => {
    const r1 = await first(false);
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "Weather and time in Paris?" }, ...(r1.output as OpenAI.Responses.ResponseInputItem[]), ...functionCallOutputs(r1)];
    const r2 = await client.responses.create({ model: MODEL, input, tools, store: false, reasoning });
    expect(r2.status).toBe("completed");
    expect(r2.output_text).not.toBe("");
    expectOneTurn();
  });

  it("a JSON turn 1 (reasoning, then a call), chained by previous_response_id: the reasoning goes back with its call", async () => {
    const r1 = await client.responses.create({ model: MODEL, input: "Weather in Paris?", tools, reasoning });
    expect(r1.output.map((o) => o.type)).toEqual(["reasoning", "function_call", "function_call"]);
    const r2 = await client.responses.create({ model: MODEL, previous_response_id: r1.id, input: functionCallOutputs(r1), tools, reasoning });
    expect(r2.status).toBe("completed");
    expect(sentTurn()[0]).toMatchObject({ role: "assistant", reasoning_content: reasoningFor("medium") });
  });
});
