// A chat upstream that sends text or reasoning between one tool call's argument fragments (DeepSeek streams
// reasoning_content that way; reference §1.5 asks consumers to tolerate any interleaving), through the gateway to the
// official openai SDK's responses.stream(): the function_call item must carry every fragment and be completed with
// them (a call whose arguments stop at `{"city": ` is what a lost fragment looks like), the text and reasoning whole.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("responses-args-between");
const MODEL = "deepseek/deepseek-reasoner";
let up: FakeOpenAI;
let gw: TestGateway;

/** The chat chunks: a call opened, reasoning and text between its fragments, the finish and usage chunks. */
function between(model: string): unknown[] {
  const base = { id: "chatcmpl-between", object: "chat.completion.chunk", created: 1770000000, model };
  const chunk = (delta: unknown, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null });
  const args = (a: string) => chunk({ tool_calls: [{ index: 0, function: { arguments: a } }] });
  return [
    chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_W1", type: "function", function: { name: "get_weather", arguments: "{\"city\": " } }] }),
    chunk({ reasoning_content: "Paris it is." }),
    args("\"Paris\", "),
    chunk({ content: "Checking" }),
    args("\"unit\": \"C\"}"),
    chunk({ content: " now." }),
    chunk({}, "tool_calls"),
    { ...base, choices: [], usage: { prompt_tokens: 40, completion_tokens: 25, total_tokens: 65 } },
  ];
}

beforeAll(async () => {
  up = await startFakeOpenAI();
  up.hook = (rec, res) => {
    if (!rec.body?.stream) return false;
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(between(rec.body.model).map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n");
    return true;
  };
  gw = await startTestGateway({
    providers: { ds: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" } },
    models: { [MODEL]: { type: "language", tags: ["tool-use", "reasoning"], endpoints: [{ provider: "ds", model: "deepseek-reasoner", pricing: { input: "0.00000055", output: "0.0000022" } }] } },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

describe("Responses client <- text and reasoning between one tool call's argument fragments", () => {
  it("responses.stream().finalResponse(): the function call's arguments are whole, and the text and reasoning are all there", async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0 });
    const stream = client.responses.stream({
      model: MODEL, input: "Weather in Paris?", store: false,
      tools: [{ type: "function", name: "get_weather", strict: false, parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string" } } } }],
    });
    const argsDone: string[] = [];
    stream.on("response.function_call_arguments.done", (e) => argsDone.push(e.arguments));
    const final = await stream.finalResponse();
    expect(final.status).toBe("completed");
    const call = final.output.find((o) => o.type === "function_call");
    expect(call).toMatchObject({ call_id: "call_W1", name: "get_weather", status: "completed" });
    expect(JSON.parse((call as OpenAI.Responses.ResponseFunctionToolCall).arguments)).toEqual({ city: "Paris", unit: "C" });
    expect(argsDone.map((a) => JSON.parse(a))).toEqual([{ city: "Paris", unit: "C" }]);
    expect(final.output_text).toBe("Checking now.");
    expect(final.output.map((o) => o.type)).toEqual(["function_call", "reasoning", "message"]);
  });
});
