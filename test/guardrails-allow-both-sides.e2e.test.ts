// An allow rule on both sides (`on: [input, output]`) is one topic check per request: the user's turn about the topic
// satisfies it for the answer too (an answer need not repeat "invoice" to pass), on every client protocol, JSON and
// streamed, and the stored Responses record is judged the same way (kept, not refused). A request off the topic is
// still refused. A tool loop's next turn passes too: chat and Messages send the user's turn again in the history, a
// Responses turn that only sends the tool's output on previous_response_id has its user turn in the stored state,
// judged when it was sent, so its answer need not carry the topic either (a new user turn of its own is judged).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startTestGateway } from "./helpers/gateway.ts";
import { KEY, policyConfig } from "./helpers/policy-config.ts";
import { ask, PROTOCOLS } from "./helpers/protocol-clients.ts";
import type { RunningGateway } from "../core/server.ts";

const MODEL = "openai/gpt-4o-mini";
const GUARDRAILS = { rules: [{ name: "billing-only", type: "allow", keywords: ["invoice", "refund"], on: ["input", "output"], action: "block" }] };

let fake: FakeOpenAI;
let gw: RunningGateway;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.piecesFor = () => ["Sure, ", "it is on its way."]; // no billing word in the answer
  gw = await startTestGateway(policyConfig(fake.baseUrl, { acme: { guardrails: GUARDRAILS } }));
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

describe.each(PROTOCOLS)("an allow rule on input and output, on %s", (protocol) => {
  describe.each([false, true])("stream: %s", (stream) => {
    it("passes the answer when the user's turn was about the topic", async () => {
      const r = await ask(gw.url, KEY, protocol, MODEL, "Please resend my invoice", stream);
      expect(r.status, r.raw).toBe(200);
      expect(r.errorCode, r.raw).toBeUndefined();
      expect(r.text).toBe("Sure, it is on its way.");
    });

    it("refuses a turn off the topic", async () => {
      const r = await ask(gw.url, KEY, protocol, MODEL, "Tell me a joke", stream);
      expect(r.status).toBe(400);
      expect(r.rule).toBe("billing-only");
    });
  });
});

describe("the stored Responses record under an allow rule on both sides", () => {
  it("is kept when the user's turn satisfied the rule, so GET and previous_response_id find it", async () => {
    const res = await fetch(`${gw.url}/api/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, input: "Please resend my invoice" }),
    });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.store).not.toBe(false);
    const got = await fetch(`${gw.url}/api/v1/responses/${body.id}`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(got.status).toBe(200);
  });
});

describe("a tool loop's next turn under an allow rule on both sides", () => {
  const TOOL = { name: "resend_invoice", description: "Resend an invoice", parameters: { type: "object", properties: {} } };
  const post = (path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    fetch(`${gw.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers }, body: JSON.stringify({ model: MODEL, ...body }) });

  beforeAll(() => {
    fake.script = ({ tools, answered }) => (tools.length && !answered ? { call: { name: TOOL.name, input: {} } } : undefined);
  });
  afterAll(() => {
    fake.script = undefined;
  });

  /** Turn 1 of a Responses loop: the user's turn about the topic, answered by a call. */
  async function responsesCall(): Promise<{ id: string; callId: string }> {
    const res = await post("/api/v1/responses", { input: "Please resend my invoice", tools: [{ type: "function", ...TOOL }] });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    const call = body.output.find((i: any) => i.type === "function_call");
    expect(call, JSON.stringify(body)).toBeDefined();
    return { id: body.id, callId: call.call_id };
  }

  it.each([false, true])("passes a Responses turn that sends only the tool's output on previous_response_id (stream: %s)", async (stream) => {
    const { id, callId } = await responsesCall();
    const res = await post("/api/v1/responses", {
      previous_response_id: id, stream, tools: [{ type: "function", ...TOOL }],
      input: [{ type: "function_call_output", call_id: callId, output: "done" }],
    });
    const raw = await res.text();
    expect(res.status, raw).toBe(200);
    expect(raw).not.toContain("GUARDRAIL_BLOCKED");
    expect(raw).toContain("it is on its way.");
  });

  it("still refuses a Responses continuation whose own user turn is off the topic", async () => {
    const { id, callId } = await responsesCall();
    const res = await post("/api/v1/responses", {
      previous_response_id: id, tools: [{ type: "function", ...TOOL }],
      input: [{ type: "function_call_output", call_id: callId, output: "done" }, { role: "user", content: "Now tell me a joke" }],
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("billing-only");
  });

  it("passes a chat turn that sends the tool's result after the user's turn", async () => {
    const res = await post("/api/v1/chat/completions", {
      tools: [{ type: "function", function: TOOL }],
      messages: [
        { role: "user", content: "Please resend my invoice" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: TOOL.name, arguments: "{}" } }] },
        { role: "tool", tool_call_id: "call_1", content: "done" },
      ],
    });
    const raw = await res.text();
    expect(res.status, raw).toBe(200);
    expect(raw).toContain("it is on its way.");
  });

  it("passes a Messages turn that sends the tool's result after the user's turn", async () => {
    const res = await post("/api/v1/messages", {
      max_tokens: 50, tools: [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.parameters }],
      messages: [
        { role: "user", content: "Please resend my invoice" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: TOOL.name, input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "done" }] },
      ],
    }, { "anthropic-version": "2023-06-01" });
    const raw = await res.text();
    expect(res.status, raw).toBe(200);
    expect(raw).toContain("it is on its way.");
  });
});
