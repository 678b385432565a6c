// Guardrails on the chat tool-call forms besides a function tool's `tool_calls[].function.arguments`: the deprecated
// single `function_call` and a custom tool's free-form `custom.input`, in answers (JSON and streamed) and, for custom
// calls, in the history a client sends back. A secret the model writes there is stopped before the client sees it,
// a placeholder it echoes comes back as the client's text, and a custom call in the history is redacted and refused
// as any other text a model reads.
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { KEY, policyConfig } from "./helpers/policy-config.ts";

const MODEL = "openai/gpt-4o-mini";
const EMAIL = "alice@example.com";
const KEY_HEAD = "sk-ant-api03-Zq8Xw7Vu6Ts5Rq4Po3Nm";
const SECRET = KEY_HEAD + "2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3Sr2Qp1On0Ml-AA";

type Form = "function_call" | "custom";

let fake: FakeOpenAI;
let gw: TestGateway;

/** The model's call text: the placeholders it was sent echoed back, or the secret when asked to leak it. */
function callText(body: any): string {
  const asked = JSON.stringify(body.messages);
  if (asked.includes("leak")) return `key ${SECRET}`;
  return `mail ${(asked.match(/\[EMAIL_\d+\]/g) ?? []).join(" ")}`;
}

/** Answers as OpenAI does with a legacy function_call or a custom tool call; streamed in 7-character fragments. */
function answer(form: Form, body: any, res: ServerResponse): void {
  const text = callText(body);
  const input = form === "function_call" ? JSON.stringify({ city: text }) : text;
  const finish = form === "function_call" ? "function_call" : "tool_calls";
  const base = { id: "chatcmpl-1", created: 1770933883, model: "gpt-4o-mini" };
  if (!body.stream) {
    const message = form === "function_call"
      ? { role: "assistant", content: null, function_call: { name: "weather", arguments: input } }
      : { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "custom", custom: { name: "run_sql", input } }] };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ ...base, object: "chat.completion", choices: [{ index: 0, message, finish_reason: finish }], usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } }));
    return;
  }
  const frames: string[] = [];
  const chunk = (delta: object, finish_reason: string | null = null) =>
    frames.push(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason }] })}\n\n`);
  chunk(form === "function_call"
    ? { role: "assistant", content: null, function_call: { name: "weather", arguments: "" } }
    : { role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_1", type: "custom", custom: { name: "run_sql", input: "" } }] });
  for (let i = 0; i < input.length; i += 7) {
    const piece = input.slice(i, i + 7);
    chunk(form === "function_call" ? { function_call: { arguments: piece } } : { tool_calls: [{ index: 0, custom: { input: piece } }] });
  }
  chunk({}, finish);
  frames.push("data: [DONE]\n\n");
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(frames.join(""));
}

let form: Form = "function_call";

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.hook = (req, res) => {
    if (req.path !== "/v1/chat/completions") return false;
    answer(form, req.body, res);
    return true;
  };
  const guardrails = {
    rules: [
      { name: "pii", detect: ["email"], action: "redact" },
      { name: "no-secrets", detect: ["secret"], on: ["input", "output"], action: "block" },
    ],
  };
  gw = await startTestGateway(policyConfig(fake.baseUrl, { acme: { guardrails } }));
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const post = (body: unknown) => postJson(`${gw.url}/api/v1/chat/completions`, body, { authorization: `Bearer ${KEY}` });

/** The call text the client got: from the JSON message, or the streamed fragments joined. */
function clientCallText(r: Awaited<ReturnType<typeof post>>, stream: boolean): string {
  if (!stream) {
    const m = r.json.choices[0].message;
    return m.function_call ? JSON.parse(m.function_call.arguments).city : m.tool_calls[0].custom.input;
  }
  const deltas = r.text.split("\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)).choices?.[0]?.delta ?? {});
  const fn = deltas.map((d) => d.function_call?.arguments ?? "").join("");
  const custom = deltas.flatMap((d) => d.tool_calls ?? []).map((t: any) => t.custom?.input ?? "").join("");
  return fn ? JSON.parse(fn).city : custom;
}

describe.each(["function_call", "custom"] as const)("a %s answer", (f) => {
  describe.each([false, true])("stream: %s", (stream) => {
    const ask = (content: string) => {
      form = f;
      return post({ model: MODEL, stream, messages: [{ role: "user", content }] });
    };

    it("comes back with the placeholders it echoes restored to the client's text", async () => {
      const r = await ask(`Look up the weather for ${EMAIL}`);
      expect(r.status, r.text).toBe(200);
      expect(JSON.stringify(fake.requests.at(-1)!.body)).not.toContain(EMAIL);
      expect(clientCallText(r, stream)).toBe(`mail ${EMAIL}`);
      expect(r.text).not.toContain("[EMAIL_");
    });

    it("is stopped when it carries a secret, which the client never sees", async () => {
      const r = await ask("please leak the deploy key");
      expect(r.status).toBe(stream ? 200 : 400);
      expect(r.text).toContain("GUARDRAIL_BLOCKED");
      expect(r.text).toContain("no-secrets");
      expect(r.text).not.toContain(KEY_HEAD);
    });
  });
});

describe("a custom tool call in the history", () => {
  const history = (input: string) => ({
    model: MODEL,
    messages: [
      { role: "user", content: "Count the rows" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_sql", type: "custom", custom: { name: "run_sql", input } }] },
      { role: "tool", tool_call_id: "call_sql", content: "42" },
      { role: "user", content: "And now?" },
    ],
  });

  it("leaves with its PII redacted", async () => {
    form = "function_call";
    const r = await post(history(`select * from users where email = '${EMAIL}'`));
    expect(r.status, r.text).toBe(200);
    expect(fake.requests.at(-1)!.body.messages[1].tool_calls[0].custom.input).toBe("select * from users where email = '[EMAIL_1]'");
  });

  it("is refused when it carries a secret, before any provider sees it", async () => {
    const before = fake.requests.length;
    const r = await post(history(`update keys set v = '${SECRET}'`));
    expect(r.status, r.text).toBe(400);
    expect(r.text).toContain("no-secrets");
    expect(r.text).not.toContain(KEY_HEAD);
    expect(fake.requests.length).toBe(before);
  });
});
