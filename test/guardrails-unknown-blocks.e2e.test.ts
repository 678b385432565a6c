// Messages content blocks of types the gateway does not know (the SDK's beta compaction, a made-up type, one inside a
// tool result) reach Claude as sent, so the input rules read them as they read text blocks, end to end on the shipped
// shape: a blocked keyword or a secret anywhere in one refuses the request before Claude is called, an email there
// leaves as a placeholder in the same field and comes back restored in the answer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";

const KEY = testKey("unknownblocks");
const SECRET = "sk-ant-api03-Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3Sr2Qp1On0Ml-AA";
const EMAIL = "bob@example.com";

let anthropic: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  anthropic = await startFakeAnthropic();
  // Claude answers with every placeholder it was sent, so the client's answer shows what came back restored.
  anthropic.textFor = (body) => (JSON.stringify(body).match(/\[EMAIL_\d+\]/g) ?? []).join(" ") || undefined;
  const config = shippedConfig({ openai: "http://127.0.0.1:9", anthropic: anthropic.baseUrl }) // only Claude is asked;
  config.projects.unknown = {
    keys: [keyEntry("u", KEY)],
    allow_models: ["anthropic/claude-sonnet-4.5"],
    budget: { usd: "100", period: "month" },
    guardrails: {
      rules: [
        { name: "no-secrets", detect: ["secret"], action: "block" },
        { name: "pii", detect: ["email"], action: "redact" },
        { name: "no-launch", keywords: ["falconlaunch"], action: "block" },
      ],
    },
  };
  gw = await startTestGateway(config, { env: providerEnv(config) });
});
afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
});

const post = (body: unknown) => postJson(`${gw.url}/api/v1/messages`, body, { "x-api-key": KEY, "anthropic-version": "2023-06-01" });
const request = (messages: unknown[]) => ({ model: "anthropic/claude-sonnet-4.5", max_tokens: 100, messages });

/**
 * Each shape with `text` in its unknown block, where that text lands in what Claude is sent, and whether the fake
 * echoes placeholders back (it answers a turn with a tool result with fixed text).
 */
const SHAPES = {
  "a compaction block in an assistant turn": {
    body: (text: string) => request([
      { role: "user", content: "Continue from the summary" },
      { role: "assistant", content: [{ type: "compaction", content: text }] },
      { role: "user", content: "and now?" },
    ]),
    sent: (b: any) => b.messages[1].content[0].content,
    echoes: true,
  },
  "a made-up block in the last user turn": {
    body: (text: string) => request([{ role: "user", content: [{ type: "made_up", text }] }]),
    sent: (b: any) => b.messages[0].content[0].text,
    echoes: true,
  },
  "an unknown block inside a tool_result": {
    body: (text: string) => request([
      { role: "user", content: "Look it up" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "weird", text }] }, { type: "text", text: "Go on" }] },
    ]),
    sent: (b: any) => b.messages[2].content[0].content[0].text,
    echoes: false,
  },
};

describe.each(Object.entries(SHAPES))("%s", (_, shape) => {
  it.each([
    ["a blocked keyword", "how to do falconlaunch", "no-launch"],
    ["a secret", `key ${SECRET}`, "no-secrets"],
  ])("%s there refuses the request before Claude is called", async (_what, text, rule) => {
    const before = anthropic.requests.length;
    const r = await post(shape.body(text));
    expect(r.status, r.text).toBe(400);
    expect(r.json?.error?.code, r.text).toBe("GUARDRAIL_BLOCKED");
    expect(r.text).toContain(rule);
    expect(anthropic.requests.length).toBe(before);
  });

  it(`an email there reaches Claude as a placeholder${shape.echoes ? " and comes back as the address" : ""}`, async () => {
    const r = await post(shape.body(`write to ${EMAIL}`));
    expect(r.status, r.text).toBe(200);
    const sent = anthropic.requests.at(-1)!.body;
    expect(shape.sent(sent)).toMatch(/^write to \[EMAIL_\d+\]$/);
    expect(JSON.stringify(sent)).not.toContain(EMAIL);
    if (shape.echoes) expect(r.json.content[0].text).toBe(EMAIL);
  });
});
