// A chat upstream that sends text or reasoning between one tool call's argument fragments (DeepSeek streams
// reasoning_content that way; reference §1.5 asks consumers to tolerate any interleaving), through the gateway to the
// official openai SDK's responses.stream(): the function_call item must carry every fragment and be completed with
// them (a call whose arguments stop at `{"city": ` is what a lost fragment looks like), the text and reasoning whole.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import type { FakeOpenAI } from "./upstreams/openai.ts";
import { callSplitByTextAndReasoning } from "./upstreams/openai-scripted-stream.ts";
import { testKey, type TestGateway } from "./helpers/gateway.ts";
import { startScriptedChatGateway } from "./helpers/scripted-chat-gateway.ts";

const KEY = testKey("responses-args-between");
const MODEL = "deepseek/deepseek-reasoner";
let up: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  ({ up, gw } = await startScriptedChatGateway(KEY, { [MODEL]: "deepseek-reasoner" }, (rec) => callSplitByTextAndReasoning(rec.body.model)));
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
