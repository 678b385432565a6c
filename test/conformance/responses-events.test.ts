// Every kind of Responses stream event the gateway writes itself (translating a chat or Messages upstream) conforms
// to OpenAI's official description (issue 26, item 6): text, tool calls, reasoning summaries, a refusal, an
// incomplete answer, and a failure mid-stream (response.failed, then the error event). The run must see every one of
// those event types, so a type the gateway emits without a scenario here fails the coverage check below.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { SseParser } from "../../core/sse/parse.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "../helpers/gateway.ts";
import { expectOpenAIResponseEvent, expectOpenAIShape } from "../helpers/openai-spec.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../upstreams/openai.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "../upstreams/anthropic.ts";

const KEY = testKey("rsp-events");
const GPT = "openai/gpt-test";
const CLAUDE = "anthropic/claude-test";
/** What the gateway's Responses translator writes (providers/translate/responses-to-chat/stream.ts) and respond.ts. */
const EMITTED = [
  "response.created", "response.in_progress", "response.output_item.added", "response.output_item.done",
  "response.content_part.added", "response.content_part.done", "response.output_text.delta", "response.output_text.done",
  "response.function_call_arguments.delta", "response.function_call_arguments.done",
  "response.reasoning_summary_part.added", "response.reasoning_summary_part.done", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
  "response.refusal.delta", "response.refusal.done", "response.completed", "response.incomplete", "response.failed", "error",
  "response.output_text.annotation.added", "response.web_search_call.in_progress", "response.web_search_call.searching", "response.web_search_call.completed",
];

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;
const seen = new Set<string>();

/** A chat upstream that refuses, the way OpenAI streams a refusal. */
function refuse(body: any, res: ServerResponse): boolean {
  if (!JSON.stringify(body.messages).includes("forbidden")) return false;
  const base = { id: "chatcmpl-refuse", object: "chat.completion.chunk", created: 1, model: body.model, system_fingerprint: "fp", choices: [] as unknown[] };
  const frame = (choices: unknown[], extra = {}) => `data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`;
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(
    frame([{ index: 0, delta: { role: "assistant", content: null, refusal: "" }, logprobs: null, finish_reason: null }]) +
    ["I can't", " help with that."].map((r) => frame([{ index: 0, delta: { refusal: r }, logprobs: null, finish_reason: null }])).join("") +
    frame([{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }]) +
    frame([], { usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 } }) + "data: [DONE]\n\n",
  );
  return true;
}

beforeAll(async () => {
  openai = await startFakeOpenAI();
  openai.hook = (rec, res) => refuse(rec.body, res);
  anthropic = await startFakeAnthropic();
  const pricing = { input: "0.000001", output: "0.000002" };
  gw = await startTestGateway({
    providers: {
      oai: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
      claude: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
    },
    models: {
      [GPT]: { type: "language", endpoints: [{ provider: "oai", model: "gpt-test", pricing }] },
      [CLAUDE]: { type: "language", max_tokens: 8192, endpoints: [{ provider: "claude", model: "claude-test", pricing }] },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await anthropic?.close();
});

/** Streams one request and checks every event against OpenAI's description; returns the events' types. */
async function streamed(body: Record<string, unknown>): Promise<string[]> {
  const res = await fetch(`${gw.baseURL}/responses`, {
    method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ ...body, stream: true }),
  });
  expect(res.status).toBe(200);
  const events = new SseParser().push(await res.text()).map((e) => ({ name: e.event, data: JSON.parse(e.data) }));
  for (const e of events) {
    expect(e.name).toBe(e.data.type);
    expectOpenAIResponseEvent(e.data);
    seen.add(e.data.type);
  }
  return events.map((e) => e.data.type);
}

const weather = { type: "function", name: "get_weather", description: "Weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };

describe("Responses stream events the gateway writes, against OpenAI's description", () => {
  it("text on a chat upstream (and the same answer as JSON)", async () => {
    expect(await streamed({ model: GPT, input: "Hi" })).toContain("response.output_text.delta");
    const json = await (await fetch(`${gw.baseURL}/responses`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: GPT, input: "Hi" }) })).json();
    expectOpenAIShape("Response", json);
  });

  it("function calls on a chat and a Messages upstream", async () => {
    for (const model of [GPT, CLAUDE]) expect(await streamed({ model, input: "Weather in Paris?", tools: [weather] })).toContain("response.function_call_arguments.done");
  });

  it("reasoning summaries from Anthropic thinking", async () => {
    expect(await streamed({ model: CLAUDE, input: "Hi", reasoning: { effort: "low", summary: "auto" }, max_output_tokens: 4000 })).toContain("response.reasoning_summary_text.done");
  });

  it("a refusal", async () => {
    expect(await streamed({ model: GPT, input: "Something forbidden" })).toContain("response.refusal.done");
  });

  it("an answer cut at max_output_tokens is incomplete", async () => {
    expect((await streamed({ model: CLAUDE, input: "Tell me a long story", max_output_tokens: 2 })).at(-1)).toBe("response.incomplete");
  });

  it("a web search answer citing its source: the web_search_call item and the annotation (and the same answer as JSON)", async () => {
    const body = { model: CLAUDE, input: "What is the latest gateway news?", tools: [{ type: "web_search" }] };
    expect(await streamed(body)).toContain("response.output_text.annotation.added");
    const json = await (await fetch(`${gw.baseURL}/responses`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify(body) })).json();
    expect(json.output.map((o: any) => o.type)).toEqual(["web_search_call", "message"]);
    expectOpenAIShape("Response", json);
  });

  it("a failure mid-stream: response.failed, then the error event", async () => {
    anthropic.failures.push({ kind: "error-event", afterEvents: 6 });
    expect((await streamed({ model: CLAUDE, input: "Hi" })).slice(-2)).toEqual(["response.failed", "error"]);
  });

  it("the scenarios above saw every event type the gateway writes", () => {
    expect([...seen].sort()).toEqual([...EMITTED].sort());
  });
});
