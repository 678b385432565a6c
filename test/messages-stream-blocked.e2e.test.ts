// A Messages stream a block rule stops mid-way ends as Anthropic ends a stream its own classifiers stop: the text
// that had cleared the window, a text block naming the rule, message_delta with stop_reason "refusal", message_stop;
// no `error` event. After the `error` event Claude Code took the stream for a failed one and sent the request again
// without streaming: the blocked answer generated and billed twice (ledger 200 blocked + 400 blocked), and all it
// showed was "API Error: 400 ...". On the shipped gateway.yaml with a guardrails block rule, on a translated model.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { ledgerRecordOf, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, SHIPPED_PROJECT, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import type { AgentScript } from "./upstreams/scripted-agent.ts";

const SECRET = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH";
// More than the guardrail's 64-character window before the secret: that much of the answer is sent before the block.
const LEAD = "Here is what the tool printed when it read the configuration file you asked me about:";
const MODEL = "openai/gpt-4.1";
const MESSAGE = 'The answer was blocked by guardrail "no-secrets"';

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
  openai.textFor = () => `${LEAD} the key is ${SECRET}, nothing else is in the file.`;
  openai.script = toolScript;
  anthropic.script = toolScript;
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.projects[SHIPPED_PROJECT].guardrails = { rules: [{ name: "no-secrets", detect: ["secret"], on: ["output"], action: "block" }] };
  gw = await startTestGateway(config, { env: providerEnv(config) });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

const body = { model: MODEL, max_tokens: 256, stream: true, messages: [{ role: "user", content: "GUARDTEST tell me the key" }] };

/** The SSE events of a Messages stream, each its type and data. */
const eventsOf = (text: string) =>
  text.split(/\n\n/).filter((f) => f.trim()).map((f) => {
    const [, type, data] = /^event: (\S+)\ndata: (.*)$/s.exec(f)!;
    return { type, data: JSON.parse(data) };
  });

async function streamed(model: string, prompt: string, tools?: unknown[]) {
  const res = await fetch(`${gw.url}/api/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": SHIPPED_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify({ model, max_tokens: 1024, stream: true, messages: [{ role: "user", content: prompt }], ...(tools ? { tools } : {}) }),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, events: eventsOf(text), requestId: res.headers.get("x-request-id") };
}

// A tool call whose arguments hold the secret: the block comes while its tool_use block is open, mid-arguments.
const BASH = { name: "Bash", description: "Run a shell command", input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } };
const TOOL_TASK = "TOOLSECRET please run it";
const toolScript: AgentScript = ({ text }) => (text.includes(TOOL_TASK) ? { call: { name: "Bash", input: { command: `echo "${LEAD}" && echo ${SECRET} > /tmp/out.txt` } } } : undefined);

describe("a Messages stream a block rule stops mid-way", () => {
  it("ends with a text block naming the rule, stop_reason refusal and message_stop, no error event, one ledger record", async () => {
    const before = openai.requests.length;
    const res = await fetch(`${gw.url}/api/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": SHIPPED_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const events = text.split(/\n\n/).filter((f) => f.trim()).map((f) => {
      const [, type, data] = /^event: (\S+)\ndata: (.*)$/s.exec(f)!;
      return { type, data: JSON.parse(data) };
    });
    expect(text).not.toContain(SECRET);
    expect(events.map((e) => e.type)).not.toContain("error");
    expect(events.slice(-2).map((e) => e.type)).toEqual(["message_delta", "message_stop"]);
    expect(events.at(-2)!.data.delta).toMatchObject({ stop_reason: "refusal", stop_details: { type: "refusal", explanation: MESSAGE } });
    // Every block started is stopped; the text before the match, then the rule's message in a block of its own.
    const started = events.filter((e) => e.type === "content_block_start").map((e) => e.data.index);
    expect(events.filter((e) => e.type === "content_block_stop").map((e) => e.data.index)).toEqual(started);
    const blocks = started.map((i) => events.filter((e) => e.type === "content_block_delta" && e.data.index === i).map((e) => e.data.delta.text).join(""));
    expect(blocks[0].startsWith(LEAD.slice(0, 20))).toBe(true);
    expect(blocks.at(-1)).toBe(`[${MESSAGE}]`);
    expect(openai.requests.length - before).toBe(1);
    expect(await ledgerRecordOf(gw, res.headers.get("x-request-id"))).toMatchObject({ status: 200, outcome: "blocked", guardrail: "block:no-secrets" });
  });

  it("the Anthropic SDK's stream ends as a refusal with the text so far, without throwing", async () => {
    const client = new Anthropic({ apiKey: SHIPPED_KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });
    const stream = client.messages.stream({ ...body, stream: undefined } as any);
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe("refusal");
    const texts = final.content.map((b: any) => b.text);
    expect(texts[0].startsWith(LEAD.slice(0, 20))).toBe(true);
    expect(texts.at(-1)).toBe(`[${MESSAGE}]`);
  });

  // Claude Code starts a tool at its block's content_block_stop: a tool_use closed with the arguments cut short ran
  // Bash with them, its result went back to the model, and the blocked answer came again — 478 billed calls in 100 s.
  it.each([["native", "anthropic/claude-sonnet-4.6"], ["translated", MODEL]])("a block mid-way through a tool call's arguments (%s) leaves its tool_use block unclosed: the rule's text block, refusal, message_stop", async (_, model) => {
    const upstream = model === MODEL ? openai.requests : anthropic.requests;
    const before = upstream.length;
    const { text, events, requestId } = await streamed(model, TOOL_TASK, [BASH]);
    expect(text).not.toContain(SECRET);
    const tool = events.find((e) => e.type === "content_block_start" && e.data.content_block.type === "tool_use");
    expect(tool).toBeDefined(); // the block began: some arguments went out before the match
    const toolIndex = tool!.data.index;
    expect(events.filter((e) => e.type === "content_block_stop").map((e) => e.data.index)).not.toContain(toolIndex);
    expect(events.map((e) => e.type)).not.toContain("error");
    expect(events.slice(-5).map((e) => e.type)).toEqual(["content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    expect(events.at(-4)!.data.delta).toEqual({ type: "text_delta", text: `[${MESSAGE}]` });
    expect(events.at(-4)!.data.index).toBeGreaterThan(toolIndex);
    expect(events.at(-2)!.data.delta.stop_reason).toBe("refusal");
    expect(upstream.length - before).toBe(1);
    // The refusal reports the output the request is billed for, as a client reconciling usage adds it up.
    const record = await ledgerRecordOf(gw, requestId);
    expect(record).toMatchObject({ outcome: "blocked", guardrail: "block:no-secrets" });
    expect(record.outputTokens).toBeGreaterThan(1);
    expect(events.at(-2)!.data.usage.output_tokens).toBe(record.outputTokens);
  });
});

// Output moderation and allow rules judge the whole answer when it ends: the upstream's message_delta is held until
// that verdict, so a block there replaces it with the refusal's. Sent first, the client got two message_deltas (the
// upstream's stop_reason, then refusal), which Anthropic never sends.
describe("a Messages stream blocked at the answer's end (an output allow rule)", () => {
  let judged: TestGateway;
  beforeAll(async () => {
    const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
    config.projects[SHIPPED_PROJECT].guardrails = { rules: [{ name: "billing-only", type: "allow", keywords: ["invoice"], on: ["output"], action: "block" }] };
    judged = await startTestGateway(config, { env: providerEnv(config) });
  });
  afterAll(() => judged?.close());

  it.each([["native", "anthropic/claude-sonnet-4.6"], ["translated", MODEL]])("%s: the answer, then one message_delta (refusal) and message_stop", async (_, model) => {
    const res = await fetch(`${judged.url}/api/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": SHIPPED_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model, max_tokens: 256, stream: true, messages: [{ role: "user", content: "tell me a story" }] }),
    });
    expect(res.status).toBe(200);
    const events = eventsOf(await res.text());
    expect(events.map((e) => e.type)).not.toContain("error");
    const deltas = events.filter((e) => e.type === "message_delta");
    expect(deltas).toHaveLength(1);
    expect(deltas[0].data.delta.stop_reason).toBe("refusal");
    expect(deltas[0].data.delta.stop_details.explanation).toContain('"billing-only"');
    expect(events.slice(-3).map((e) => e.type)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    const record = await ledgerRecordOf(judged, res.headers.get("x-request-id"));
    expect(record).toMatchObject({ outcome: "blocked" });
    // The refusal's usage is the billed one, input too: a translated upstream's input count came only with its own
    // message_delta, which the refusal replaces (message_start said an estimate).
    expect(deltas[0].data.usage).toMatchObject({ input_tokens: record.inputTokens, output_tokens: record.outputTokens });
  });
});
