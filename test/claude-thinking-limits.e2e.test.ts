// Claude with reasoning asked for, from chat, Responses and Gemini clients (the chat -> messages translator): what
// the client forces and caps holds. Anthropic refuses forced tool use with thinking, so a forced tool or JSON mode
// turns thinking off (named in x-mg-dropped-params) instead of losing the force; the client's output limit holds the
// reasoning, as OpenAI's does, so max_tokens is that limit with the budget below it, or thinking is off when
// Anthropic's minimum budget (1024) cannot fit. The budget reserves what is sent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { z } from "zod";
import { zodTextFormat } from "openai/helpers/zod";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { geminiClient, type GeminiClient } from "./helpers/gemini-client.ts";

const LIVE = testKey("claude-thinking-limits");
const POOR = testKey("claude-thinking-limits-poor");
const model = "t/claude";
let claude: FakeAnthropic;
let gw: TestGateway;
let client: OpenAI;
let gemini: GeminiClient;

beforeAll(async () => {
  claude = await startFakeAnthropic();
  gw = await startTestGateway({
    providers: { claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY } },
    models: { [model]: { type: "language", tags: ["tool-use", "reasoning"], max_tokens: 8192, endpoints: [{ provider: "claude", model: "claude-sonnet-4-20250514", pricing: { input: "0", output: "0.000015" } }] } },
    projects: {
      acme: { keys: [keyEntry("ci", LIVE)] },
      poor: { keys: [keyEntry("poor", POOR)], budget: { usd: "0.000000001", period: "month" } },
    },
  });
  client = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0 });
  gemini = geminiClient(`${gw.url}/api`, LIVE);
});

afterAll(async () => {
  await gw?.close();
  await claude?.close();
});

const sent = () => claude.requests.at(-1)!.body;
const tools: OpenAI.Responses.FunctionTool[] = ["get_weather", "get_time"].map((name) => ({ type: "function", name, strict: false, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }));

describe("a forced tool or JSON mode with reasoning on Claude keeps its force; thinking is off and named", () => {
  it("Responses: tool_choice {type: function} calls that function", async () => {
    const { data, response } = await client.responses.create({ model, input: "time in Paris?", tools, tool_choice: { type: "function", name: "get_time" }, reasoning: { effort: "low" } }).withResponse();
    expect(sent().tool_choice).toEqual({ type: "tool", name: "get_time" });
    expect(sent().thinking).toBeUndefined();
    expect(response.headers.get("x-mg-dropped-params")).toBe("reasoning.effort");
    expect(data.output.filter((o) => o.type === "function_call").map((o: any) => o.name)).toEqual(["get_time"]);
  });

  it("Responses: responses.parse with a JSON schema gets its object (the json_output tool stays forced)", async () => {
    const format = zodTextFormat(z.object({ city: z.string(), temp: z.number() }), "weather");
    const { data, response } = await client.responses.parse({ model, input: "weather in Paris as JSON", text: { format }, reasoning: { effort: "low" } }).withResponse();
    expect(sent().tool_choice).toEqual({ type: "tool", name: "json_output" });
    expect(sent().thinking).toBeUndefined();
    // zodTextFormat asks strict; the forced tool does not enforce the schema, so that is named too.
    expect(response.headers.get("x-mg-dropped-params")).toBe("text.format.strict,reasoning.effort");
    expect(data.output_parsed).toMatchObject({ city: expect.any(String), temp: expect.any(Number) });
  });

  it("chat: tool_choice required stays any, and the client's temperature is kept (thinking is off)", async () => {
    const { data, response } = await client.chat.completions.create({
      model, messages: [{ role: "user", content: "weather?" }], temperature: 0.2, reasoning_effort: "high",
      tools: tools.map((t) => ({ type: "function", function: { name: t.name, parameters: t.parameters! } })), tool_choice: "required",
    }).withResponse();
    expect(sent()).toMatchObject({ tool_choice: { type: "any" }, temperature: 0.2 });
    expect(sent().thinking).toBeUndefined();
    expect(response.headers.get("x-mg-dropped-params")).toBe("reasoning_effort");
    expect(data.choices[0]!.finish_reason).toBe("tool_calls");
  });

  it("Gemini: functionCallingConfig ANY with a thinkingConfig names generationConfig.thinkingConfig", async () => {
    const res = await gemini.raw(`/v1beta/models/${model}:generateContent`, {
      method: "POST",
      body: JSON.stringify({
        contents: [{ role: "user", parts: [{ text: "time?" }] }],
        tools: [{ functionDeclarations: [{ name: "get_time", parameters: { type: "OBJECT", properties: { city: { type: "STRING" } } } }] }],
        toolConfig: { functionCallingConfig: { mode: "ANY" } },
        generationConfig: { thinkingConfig: { thinkingBudget: 2048 } },
      }),
    });
    expect(res.status).toBe(200);
    expect(sent().tool_choice).toMatchObject({ type: "any" });
    expect(sent().thinking).toBeUndefined();
    expect(res.headers.get("x-mg-dropped-params")).toBe("generationConfig.thinkingConfig");
  });

  it("with thinking on (tool_choice auto), a temperature Anthropic refuses with it is dropped and named", async () => {
    const { response } = await client.responses.create({ model, input: "hi", temperature: 0.3, reasoning: { effort: "low" } }).withResponse();
    expect(sent().thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    expect(sent().temperature).toBeUndefined();
    expect(response.headers.get("x-mg-dropped-params")).toBe("temperature");
  });
});

describe("max_output_tokens / max_completion_tokens cap Claude's output, reasoning included", () => {
  it("Responses: a cap of 20 with reasoning is max_tokens 20, thinking off and named; reserved as sent", async () => {
    const { data, response } = await client.responses.create({ model, input: "Hi", max_output_tokens: 20, reasoning: { effort: "low" } }).withResponse();
    expect(sent().max_tokens).toBe(20);
    expect(sent().thinking).toBeUndefined();
    expect(response.headers.get("x-mg-dropped-params")).toBe("reasoning.effort");
    expect(data.usage!.output_tokens).toBeLessThanOrEqual(20);
    // The budget reserves what is sent (input is free here): 20 output tokens at $15/M, not the 1044 once sent.
    const refused = await postJson(`${gw.baseURL}/responses`, { model, input: "Hi", max_output_tokens: 20, reasoning: { effort: "low" } }, { authorization: `Bearer ${POOR}` });
    expect(refused.status).toBe(402);
    expect(refused.json.error.details.request_max_usd).toBe("0.0003");
  });

  it("chat: a cap that holds Anthropic's minimum keeps thinking, with the budget cut below the cap", async () => {
    await client.chat.completions.create({ model, messages: [{ role: "user", content: "Hi" }], max_completion_tokens: 3000, reasoning_effort: "high" });
    expect(sent()).toMatchObject({ max_tokens: 3000, thinking: { type: "enabled", budget_tokens: 2999 } });
  });

  it("Gemini: maxOutputTokens 20 with a thinking budget is max_tokens 20 without thinking", async () => {
    const res = await gemini.raw(`/v1beta/models/${model}:generateContent`, {
      method: "POST",
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hi" }] }], generationConfig: { maxOutputTokens: 20, thinkingConfig: { thinkingBudget: 1024 } } }),
    });
    expect(res.status).toBe(200);
    expect(sent().max_tokens).toBe(20);
    expect(sent().thinking).toBeUndefined();
    expect(res.headers.get("x-mg-dropped-params")).toBe("generationConfig.thinkingConfig");
  });
});
