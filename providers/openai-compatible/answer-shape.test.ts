// The openai driver's JSON decoders (chat completions, native Responses) refuse a 200 whose body is JSON but not an
// answer (a retryable 502 invalid_answer; providers/answer-shape.ts), and keep the shapes OpenAI sends.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Target } from "../../core/contracts/provider.ts";
import { createOpenAIDriver } from "./index.ts";
import { listenLoopback, type Loopback } from "../../test/upstreams/http-fake.ts";
import { invalidAnswer as invalid, recordingCall as call } from "../answer-shape.testkit.ts";

async function outcome(run: () => Promise<{ kind: string; body?: unknown }>): Promise<unknown> {
  return run().then((r) => r.body, (e) => e);
}

describe("OpenAI chat completions and native Responses JSON (the openai driver)", () => {
  let up: Loopback;
  let next = "";
  const target: Target = { modelId: "t/m", provider: "oa", upstreamModel: "m", pricing: {} };
  let driver: ReturnType<typeof createOpenAIDriver>;
  beforeAll(async () => {
    up = await listenLoopback((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(next);
      });
    });
    driver = createOpenAIDriver("oa", { protocol: "openai", base_url: `${up.origin}/v1`, api_key: "sk-fake" }, { timeoutMs: 5000 });
  });
  afterAll(async () => {
    await driver?.close?.();
    await up?.close();
  });
  const chat = (body: unknown) => {
    next = JSON.stringify(body);
    return outcome(() => driver.chat!({ model: "t/m", messages: [{ role: "user", content: "hi" }] }, target, call().options));
  };
  const responses = (body: unknown) => {
    next = JSON.stringify(body);
    return outcome(() => driver.responses!({ model: "t/m", input: "hi" }, { ...target, nativeResponses: true }, call().options));
  };

  it.each([
    ["null", null],
    ["an array", [1, 2]],
    ["{}", {}],
    ["choices: []", { id: "c", object: "chat.completion", choices: [] }],
    ["choices an object", { choices: { 0: { index: 0, message: { role: "assistant", content: "hi" } } } }],
    ["a choice without a message", { id: "c", object: "chat.completion", choices: [{ index: 0, finish_reason: "stop" }] }],
    ["a Bedrock-style message on a 200", { message: "boom" }],
  ])("chat: %s is a retryable 502 invalid_answer", async (_, body) => {
    expect(await chat(body)).toMatchObject(invalid("oa"));
  });

  it("chat: content null beside tool_calls, and a refusal, are answers", async () => {
    const tools = { id: "c", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "t", type: "function", function: { name: "f", arguments: "{}" } }] }, finish_reason: "tool_calls" }] };
    expect(await chat(tools)).toEqual(tools);
    const refusal = { id: "c", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: null, refusal: "no" }, finish_reason: "stop" }] };
    expect(await chat(refusal)).toEqual(refusal);
  });

  it.each([
    ["null", null],
    ["{}", {}],
    ["output a string", { id: "resp_1", object: "response", status: "completed", output: "x" }],
  ])("responses: %s is a retryable 502 invalid_answer", async (_, body) => {
    expect(await responses(body)).toMatchObject(invalid("oa"));
  });

  it("responses: a failed response with output [] is an answer", async () => {
    const failed = { id: "resp_1", object: "response", status: "failed", output: [], error: { code: "server_error", message: "x" } };
    expect(await responses(failed)).toEqual(failed);
  });
});
