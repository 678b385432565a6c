// Chat Completions shapes the openai SDK types and OpenAI takes — tool_choice allowed_tools, custom tools, legacy
// function calling — pass as sent to an OpenAI-protocol upstream (DESIGN §10) instead of a 400 from the gateway.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenLoopback, readRequest, type Loopback } from "./upstreams/http-fake.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const LIVE = testKey("chat-tool-forms");
const model = "openai/forms";
let upstream: Loopback;
let gw: TestGateway;
let client: OpenAI;
const bodies: any[] = [];

async function handle(req: IncomingMessage, res: ServerResponse) {
  bodies.push((await readRequest(req)).body);
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({
    id: "chatcmpl-f", object: "chat.completion", created: 1, model: "gpt-forms",
    choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
  }));
}

beforeAll(async () => {
  upstream = await listenLoopback((req, res) => void handle(req, res));
  gw = await startTestGateway({
    providers: { up: { protocol: "openai", base_url: `${upstream.origin}/v1`, api_key: "sk-fake" } },
    models: { [model]: { type: "language", tags: ["tool-use"], endpoints: [{ provider: "up", model: "gpt-forms", pricing: { input: "0.000001", output: "0.000002" } }] } },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
  client = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const weather = { type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: {} } } };

describe("a native OpenAI-protocol model gets the shapes as sent", () => {
  it("tool_choice allowed_tools", async () => {
    const tool_choice = { type: "allowed_tools" as const, allowed_tools: { mode: "required" as const, tools: [{ type: "function", function: { name: "get_weather" } }] } };
    const res = await client.chat.completions.create({ model, messages: [{ role: "user", content: "x" }], tools: [weather], tool_choice });
    expect(res.choices[0]!.message.content).toBe("ok");
    expect(bodies.at(-1).tool_choice).toEqual(tool_choice);
  });

  it("a custom tool, and a tool_choice forcing it", async () => {
    const custom = { type: "custom" as const, custom: { name: "run_sql", description: "SQL", format: { type: "text" as const } } };
    await client.chat.completions.create({ model, messages: [{ role: "user", content: "x" }], tools: [weather, custom], tool_choice: { type: "custom", custom: { name: "run_sql" } } });
    expect(bodies.at(-1).tools).toEqual([weather, custom]);
  });

  it("the next turn echoing a custom tool's call and its result", async () => {
    const custom = { type: "custom" as const, custom: { name: "run_sql" } };
    const messages = [
      { role: "user" as const, content: "count rows" },
      { role: "assistant" as const, content: null, tool_calls: [{ id: "call_sql", type: "custom" as const, custom: { name: "run_sql", input: "select count(*) from t" } }] },
      { role: "tool" as const, tool_call_id: "call_sql", content: "42" },
    ];
    const res = await client.chat.completions.create({ model, messages, tools: [custom] });
    expect(res.choices[0]!.message.content).toBe("ok");
    expect(bodies.at(-1).messages).toEqual(messages);
  });

  it("legacy function calling: functions, function_call and a role function message", async () => {
    const messages = [
      { role: "user" as const, content: "weather?" },
      { role: "assistant" as const, content: null, function_call: { name: "get_weather", arguments: "{}" } },
      { role: "function" as const, name: "get_weather", content: "sunny" },
    ];
    await client.chat.completions.create({ model, messages, functions: [weather.function], function_call: "auto" });
    expect(bodies.at(-1)).toMatchObject({ messages, functions: [weather.function], function_call: "auto" });
  });
});
