// The openai SDK's runTools with reasoning_effort on an Anthropic model. From 6.49 the runner rebuilds each assistant
// message from known fields only (content, tool_calls, refusal, …) before replaying it, so the signed thinking the
// gateway returned (reasoning_details / thinking_blocks) never comes back, and Anthropic refuses a tool loop whose
// assistant turn lacks it when thinking is on (the fake answers that 400 as the real API does). The gateway keeps the
// reasoning per project under the turn's tool-call id and puts it back; when it has nothing to put back it turns
// thinking off for that request and says so in x-mg-dropped-params.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { signThinking } from "./upstreams/anthropic-checks.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("runtools-e2e");
const OTHER = testKey("runtools-other");
const MODEL = "anthropic/claude-sonnet-4.5";
let claude: FakeAnthropic;
let gw: TestGateway;
let client: OpenAI;
const sent: any[] = [];

beforeAll(async () => {
  claude = await startFakeAnthropic();
  const project = { budget: { usd: "100", period: "month" }, rate_limits: { rpm: 10_000, tpm: 10_000_000 } };
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    providers: { anthropic: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY } },
    models: { [MODEL]: { type: "language", max_tokens: 8192, endpoints: [{ provider: "anthropic", model: "claude-sonnet-4-5", pricing: { input: "0.000003", output: "0.000015" } }] } },
    projects: { acme: { keys: [keyEntry("ci", KEY)], ...project }, other: { keys: [keyEntry("other", OTHER)], ...project } },
  });
  // The bodies the SDK sends, to see what the runner replays.
  const record: typeof fetch = (input, init) => {
    if (typeof init?.body === "string") sent.push(JSON.parse(init.body));
    return fetch(input, init);
  };
  client = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0, fetch: record });
});

afterAll(async () => {
  await gw?.close();
  await claude?.close();
});

const calls: unknown[] = [];
const tools = [{
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    parse: JSON.parse,
    function: async (args: { city: string }) => {
      calls.push(args);
      return `Sunny in ${args.city}`;
    },
  },
}];

/** The assistant turn Anthropic got before the tool results, in the request that continued the loop. */
function continuedTurn(): any {
  const msgs = claude.requests.at(-1)!.body.messages;
  return msgs[msgs.length - 2];
}

describe("openai runTools with reasoning_effort on an Anthropic model", () => {
  it.each([false, true])("completes the tool loop with thinking on throughout (stream=%s)", async (stream) => {
    calls.length = 0;
    const before = claude.requests.length;
    const params = { model: MODEL, reasoning_effort: "low" as const, parallel_tool_calls: false, messages: [{ role: "user" as const, content: "What is the weather in Paris?" }], tools };
    const runner = stream ? client.chat.completions.runTools({ ...params, stream: true }) : client.chat.completions.runTools(params);
    expect(await runner.finalContent()).toBe("The weather is sunny.");
    expect(calls).toEqual([expect.objectContaining({ city: "Paris" })]);
    expect(claude.requests.length).toBe(before + 2);
    // The runner did replay the turn without its reasoning (what makes this test necessary)…
    const replayed = sent.at(-1).messages.find((m: { role: string }) => m.role === "assistant");
    expect(replayed.tool_calls).toHaveLength(1);
    expect(Object.keys(replayed).filter((k) => /reasoning|thinking/.test(k))).toEqual([]);
    // …and Anthropic still got it back, signed, first in the turn, with thinking on for both requests.
    expect(claude.requests.at(-1)!.body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    const first = continuedTurn().content[0];
    expect(first).toMatchObject({ type: "thinking", thinking: "Let me think about this carefully." });
    expect(first.signature).toBe(signThinking(first.thinking));
  });

  it("nothing to put back (another project, which cannot read this one's): thinking off for that request, named in x-mg-dropped-params", async () => {
    const turn = await postJson(`${gw.baseURL}/chat/completions`, {
      model: MODEL, reasoning_effort: "low", parallel_tool_calls: false, tools: [{ type: "function", function: { name: "get_weather", parameters: tools[0]!.function.parameters } }],
      messages: [{ role: "user", content: "What is the weather in Paris?" }],
    }, { authorization: `Bearer ${KEY}` });
    expect(turn.status).toBe(200);
    const message = turn.json.choices[0].message;
    expect(message.reasoning_details).toHaveLength(1);
    // What runTools sends back: no reasoning fields.
    const history = [
      { role: "user", content: "What is the weather in Paris?" },
      { role: "assistant", content: message.content, tool_calls: message.tool_calls },
      { role: "tool", tool_call_id: message.tool_calls[0].id, content: "Sunny in Paris" },
    ];
    const body = { model: MODEL, reasoning_effort: "low", messages: history, tools: [{ type: "function", function: { name: "get_weather", parameters: tools[0]!.function.parameters } }] };
    const other = await postJson(`${gw.baseURL}/chat/completions`, body, { authorization: `Bearer ${OTHER}` });
    expect(other.status).toBe(200);
    expect(other.json.choices[0].message.content).toBe("The weather is sunny.");
    expect(other.headers.get("x-mg-dropped-params")).toBe("reasoning_effort");
    expect(claude.requests.at(-1)!.body.thinking).toBeUndefined();
    // The project that made the turn gets its thinking back.
    const own = await postJson(`${gw.baseURL}/chat/completions`, body, { authorization: `Bearer ${KEY}` });
    expect(own.status).toBe(200);
    expect(own.headers.get("x-mg-dropped-params")).toBeNull();
    expect(claude.requests.at(-1)!.body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    expect(continuedTurn().content[0].type).toBe("thinking");
  });
});
