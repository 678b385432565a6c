// A Responses stream the guardrails block mid-way (an output rule with action block, the model echoing a secret it
// was given in a tool result) ends as an upstream failure does: response.failed with the response as far as it got,
// then the `error` event naming the rule, numbered on from the stream, each exactly once — on a model served natively
// (the upstream's own Responses events relayed) and on a translated one. With the `error` event alone, Codex CLI and
// opencode took the stream for one cut short and sent the request again and again, billed each time. The failed
// response's code is `invalid_prompt`, the one Codex CLI shows without asking again.
// On the shipped gateway.yaml with a guardrails block rule added to its project.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, SHIPPED_PROJECT, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";

const SECRET = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH";
const ECHO = `The tool printed ${SECRET} as the key, nothing else.`;
const NATIVE = "openai/gpt-4o-mini";
const TRANSLATED = "anthropic/claude-sonnet-4.5";

let openai: FakeOpenAIWithResponses;
let anthropic: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAIResponses(), startFakeAnthropic()]);
  // Both models echo the tool's output, secret and all.
  openai.script = ({ answered }) => (answered ? { text: ECHO } : undefined);
  anthropic.script = ({ answered }) => (answered ? { text: ECHO } : undefined);
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.projects[SHIPPED_PROJECT].guardrails = { rules: [{ name: "no-secrets", detect: ["secret"], on: ["output"], action: "block" }] };
  gw = await startTestGateway(config, { env: providerEnv(config) });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

/** A Codex-like turn: the shell call it made, and its output holding the secret. */
const turn = (model: string) => ({
  model, stream: true, instructions: "Be brief.",
  tools: [{ type: "function", name: "shell", parameters: { type: "object", properties: { command: { type: "string" } } } }],
  input: [
    { type: "message", role: "user", content: [{ type: "input_text", text: "What key does the config hold?" }] },
    { type: "function_call", call_id: "call_1", name: "shell", arguments: '{"command":"cat .env"}' },
    { type: "function_call_output", call_id: "call_1", output: `OPENAI_API_KEY=${SECRET}` },
  ],
});

/** The stream's frames as sent: each `event:` name and its JSON. */
async function frames(model: string): Promise<Array<{ name: string | undefined; data: any }>> {
  const res = await fetch(`${gw.baseURL}/responses`, {
    method: "POST", headers: { authorization: `Bearer ${SHIPPED_KEY}`, "content-type": "application/json" }, body: JSON.stringify(turn(model)),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  return text.split("\n\n").filter((f) => f.trim()).map((f) => {
    const lines = f.split("\n");
    return { name: lines.find((l) => l.startsWith("event: "))?.slice(7), data: JSON.parse(lines.find((l) => l.startsWith("data: "))!.slice(6)) };
  });
}

describe.each([["native", NATIVE], ["translated", TRANSLATED]])("a Responses stream blocked mid-way (%s)", (_, model) => {
  it("ends with response.failed (the rule's message, the output so far) and then one error event, numbered on", async () => {
    const fs = await frames(model);
    const names = fs.map((f) => f.name);
    expect(names.slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
    expect(names.slice(-2)).toEqual(["response.failed", "error"]);
    expect(names.filter((n) => n === "response.failed" || n === "error" || n === "response.completed")).toEqual(["response.failed", "error"]);
    // Every event's type is its name, and the numbering runs on without a gap to the error event.
    for (const f of fs) expect(f.data.type).toBe(f.name);
    expect(fs.map((f) => f.data.sequence_number)).toEqual(fs.map((_, i) => fs[0]!.data.sequence_number + i));

    const failed = fs.at(-2)!.data.response;
    const error = fs.at(-1)!.data;
    expect(error.error).toMatchObject({ code: "GUARDRAIL_BLOCKED" });
    expect(error.error.message).toContain("no-secrets");
    const created = fs[0]!.data.response;
    expect(failed).toMatchObject({ id: created.id, object: "response", status: "failed", model: created.model, error: { code: "invalid_prompt", message: error.error.message } });
    expect(Array.isArray(failed.output)).toBe(true);
    for (const item of failed.output) expect(["completed", "incomplete"]).toContain(item.status);
    // The secret never reached the client.
    expect(JSON.stringify(fs)).not.toContain(SECRET);
  });
});
