// The built-in simulator behind sandbox keys: tool calls and structured output that validate, stop,
// max_tokens, n, and honest usage.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { Ajv } from "../core/ajv.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

const SANDBOX = testKey("sim-e2e", true);
let gw: TestGateway;
let client: OpenAI;

/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  gw = await startTestGateway({
    // The model's only endpoint is a provider that is not even reachable: sandbox keys never go there.
    providers: { real: { protocol: "openai", base_url: "http://127.0.0.1:9", api_key: "sk-real" } },
    models: { "openai/gpt-4o-mini": { endpoints: [{ provider: "real", model: "gpt-4o-mini", pricing: { input: "1", output: "1" } }] } },
    projects: { p: { keys: [keyEntry("sandbox", SANDBOX)] } },
  });
  client = new OpenAI({ apiKey: SANDBOX, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
});
afterAll(async () => {
  await gw?.close();
});

const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Get the current weather for a city",
    parameters: {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      additionalProperties: false,
      required: ["city", "unit"],
      properties: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
    },
  },
};

describe("sandbox keys reach the simulator", () => {
  it("answers with text, usage counting exactly the streamed tokens", async () => {
    const stream = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Tell me about gateways" }], stream: true, stream_options: { include_usage: true } });
    let contentChunks = 0;
    let usage: any;
    let text = "";
    for await (const c of stream) {
      if (c.choices[0]?.delta?.content) {
        contentChunks++;
        text += c.choices[0].delta.content;
      }
      if (c.usage) usage = c.usage;
    }
    expect(text).toContain('Simulated reply from openai/gpt-4o-mini to "Tell me about gateways"');
    expect(usage.completion_tokens).toBe(contentChunks);
    expect(usage.prompt_tokens).toBeGreaterThan(4);
    const json = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Tell me about gateways" }] });
    expect(json.choices[0]!.message.content).toBe(text);
    expect((json as any).providerMetadata.gateway.resolvedProvider).toBe("sim");
  });

  it("calls a tool whose arguments validate against its draft-07 schema, then answers the tool result", async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "What is the weather in Paris?" }];
    const first = await client.chat.completions.stream({ model: "openai/gpt-4o-mini", messages, tools: [weatherTool] }).finalChatCompletion();
    const call = first.choices[0]!.message.tool_calls![0] as any;
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    expect(call.function.name).toBe("get_weather");
    const args = JSON.parse(call.function.arguments);
    expect(new Ajv({ strict: false }).validate(weatherTool.function.parameters, args)).toBe(true);
    expect(args.city).toBe("Paris");
    messages.push(first.choices[0]!.message as any, { role: "tool", tool_call_id: call.id, content: '{"temp": 18}' });
    const second = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages, tools: [weatherTool] });
    expect(second.choices[0]!.finish_reason).toBe("stop");
    expect(second.choices[0]!.message.content).toContain('{"temp": 18}');
  });

  it("does not call tools when tool_choice is none, and must when it is required", async () => {
    const none = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "weather in Paris" }], tools: [weatherTool], tool_choice: "none" });
    expect(none.choices[0]!.message.tool_calls).toBeUndefined();
    const required = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hello" }], tools: [weatherTool], tool_choice: "required" });
    expect(required.choices[0]!.message.tool_calls).toHaveLength(1);
  });

  it("returns structured output that validates against the requested json_schema", async () => {
    const schema = {
      type: "object",
      additionalProperties: false,
      required: ["title", "score", "labels"],
      properties: { title: { type: "string" }, score: { type: "number", minimum: 0, maximum: 10 }, labels: { type: "array", items: { type: "string" }, minItems: 1 } },
    };
    const res = await client.chat.completions.create({
      model: "openai/gpt-4o-mini",
      messages: [{ role: "user", content: "Review the movie Alien" }],
      response_format: { type: "json_schema", json_schema: { name: "review", schema, strict: true } },
    });
    const value = JSON.parse(res.choices[0]!.message.content!);
    expect(new Ajv({ strict: false }).validate(schema, value)).toBe(true);
  });

  it("a client that leaves while the simulator makes its answer: the record says 499, not a 500 of the gateway's", async () => {
    // A simulator that takes 5 s to its first token: the client is gone long before.
    const slow = await startTestGateway({
      providers: { sim: { protocol: "sim", sim: { ttft_ms: 5000 } } },
      models: { "openai/gpt-4o-mini": { endpoints: [{ provider: "sim", model: "gpt-4o-mini" }] } },
      projects: { p: { keys: [keyEntry("sandbox", SANDBOX)] } },
    });
    try {
      expect(await clientLeavesSim(slow)).toMatchObject({ status: 499, outcome: "aborted" });
    } finally {
      await slow.close();
    }
  });

  async function clientLeavesSim(gw: TestGateway): Promise<unknown> {
    const ac = new AbortController();
    const sent = fetch(`${gw.baseURL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${SANDBOX}`, "content-type": "application/json", "x-request-id": "req-sim-left" },
      body: JSON.stringify({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Take your time" }] }),
      signal: ac.signal,
    }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
    ac.abort();
    await sent;
    let record: unknown;
    for (let i = 0; i < 50 && !record; i++) {
      record = (await gw.gateway.store.ledger({})).find((e) => e.requestId === "req-sim-left");
      if (!record) await new Promise((r) => setTimeout(r, 50));
    }
    return record;
  }

  it("reads a draft-04 json_schema, and answers a schema invalid for its draft with a 400 naming it (was a 500)", async () => {
    const ask = (schema: Record<string, unknown>) => client.chat.completions.create({
      model: "openai/gpt-4o-mini",
      messages: [{ role: "user", content: "Rate it" }],
      response_format: { type: "json_schema", json_schema: { name: "rating", schema } },
    });
    const draft04 = { $schema: "http://json-schema.org/draft-04/schema#", type: "object", required: ["stars"], properties: { stars: { type: "integer", minimum: 0, exclusiveMinimum: true, maximum: 5 } } };
    const value = JSON.parse((await ask(draft04)).choices[0]!.message.content!);
    expect(value.stars).toBeGreaterThan(0);
    expect(value.stars).toBeLessThanOrEqual(5);

    const invalid = { ...draft04, $schema: "http://json-schema.org/draft-07/schema#" };
    const err = await ask(invalid).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ code: "INVALID_REQUEST", param: "response_format.json_schema.schema" });
    expect(err.error.message).toContain("exclusiveMinimum must be number");
  });

  it("honours max_tokens (finish_reason length), stop sequences and n", async () => {
    const short = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 4 });
    expect(short.choices[0]!.finish_reason).toBe("length");
    expect(short.usage!.completion_tokens).toBe(4);
    const stopped = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }], stop: ["from"] });
    expect(stopped.choices[0]!.message.content).toBe("Simulated reply ");
    expect(stopped.choices[0]!.finish_reason).toBe("stop");
    const many = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }], n: 2, max_tokens: 2 });
    expect(many.choices.map((c) => c.index)).toEqual([0, 1]);
  });
});
