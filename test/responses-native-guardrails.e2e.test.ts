// previous_response_id on a native Responses upstream (catalog native_responses) under a project's redact rule: each
// request numbers its own placeholders, so the upstream's own copy of an earlier turn holds an [EMAIL_1] that meant
// another value. A later turn is sent as the conversation the gateway kept (earlier values as masks), never continued
// by id, so one conversation never gives a placeholder two meanings and the answer's [EMAIL_1] is only this turn's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("native-guard");
const PLAIN = testKey("native-plain");
const MASKED = testKey("native-masked");
let native: FakeOpenAIWithResponses;
let gw: TestGateway;

beforeAll(async () => {
  native = await startFakeOpenAIResponses();
  // The model answers about the address it was given, by whatever placeholder it saw first in the conversation.
  native.script = ({ text }) => {
    const first = /\[EMAIL_\d+\]|\[REDACTED:EMAIL\]|\S+@example\.com/.exec(text)?.[0];
    return first ? { text: `Writing to ${first} now.` } : undefined;
  };
  gw = await startTestGateway({
    providers: { native: { protocol: "openai", base_url: native.baseUrl, api_key: "sk-fake-upstream" } },
    models: { "openai/gpt-5": { type: "language", endpoints: [{ provider: "native", model: "gpt-5", native_responses: true, pricing: { input: "0.000001", output: "0.000002" } }] } },
    projects: {
      acme: { keys: [keyEntry("k", KEY)], guardrails: { rules: [{ name: "pii", detect: ["email"], action: "redact" }] } },
      plain: { keys: [keyEntry("p", PLAIN)] },
      masked: { keys: [keyEntry("m", MASKED)], guardrails: { rules: [{ name: "pii", detect: ["email"], action: "redact", redact_with: "mask" }] } },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await native?.close();
});

async function create(key: string, body: Record<string, unknown>): Promise<any> {
  const res = await fetch(`${gw.url}/api/v1/responses`, {
    method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify({ model: "openai/gpt-5", ...body }),
  });
  const raw = await res.text();
  expect(res.status, raw).toBe(200);
  return JSON.parse(raw);
}

const textOf = (r: any): string => r.output.filter((o: any) => o.type === "message").flatMap((o: any) => o.content).map((p: any) => p.text).join("");

describe("a chain on a native upstream under a redact rule", () => {
  it("a later turn's answer never restores an earlier turn's placeholder to this turn's value", async () => {
    const t1 = await create(KEY, { input: "Email alice@example.com please" });
    expect(textOf(t1)).toBe("Writing to alice@example.com now.");

    const t2 = await create(KEY, { previous_response_id: t1.id, input: "also bob@example.com" });
    const sent = native.requests.at(-1)!.body;
    // The whole conversation as kept, not the upstream's copy holding turn 1's [EMAIL_1] (alice).
    expect(sent.previous_response_id).toBeUndefined();
    const texts = JSON.stringify(sent.input);
    expect(texts).toContain("Email [REDACTED:EMAIL] please");
    expect(texts).toContain("also [EMAIL_1]");
    expect(texts).not.toContain("alice");
    // The model meant the first address it saw: the client is told it is masked, not that it was bob.
    expect(textOf(t2)).toBe("Writing to [REDACTED:EMAIL] now.");
    expect(t2.previous_response_id).toBe(t1.id);
  });

  it("a chain the upstream no longer holds (its retention, a zero-retention org) is resent without its reasoning ids", async () => {
    const t1 = await create(KEY, { input: "Email alice@example.com please" });
    expect(t1.output.some((o: any) => o.type === "reasoning")).toBe(true);
    native.responses.stored.clear(); // OpenAI forgot turn 1: its reasoning item, referenced by id, is gone
    const before = native.requests.length;
    const t2 = await create(KEY, { previous_response_id: t1.id, input: "also bob@example.com" });
    expect(textOf(t2)).toBe("Writing to [REDACTED:EMAIL] now.");
    const tries = native.requests.slice(before).map((r) => r.body);
    expect(tries.length).toBe(2);
    expect(JSON.stringify(tries[0].input)).toContain(t1.output.find((o: any) => o.type === "reasoning").id);
    expect(tries[1].input.some((i: any) => i.type === "reasoning")).toBe(false);
    expect(JSON.stringify(tries[1].input)).toContain("Email [REDACTED:EMAIL] please");
  });

  it("a project without a redact rule still continues by id at the upstream", async () => {
    const t1 = await create(PLAIN, { input: "hello there" });
    await create(PLAIN, { previous_response_id: t1.id, input: "and again" });
    expect(native.requests.at(-1)!.body.previous_response_id).toBe(t1.id);
  });
});

describe("an OpenAI conversation (Conversations API) under a redact rule", () => {
  const post = (key: string, body: Record<string, unknown>) => fetch(`${gw.url}/api/v1/responses`, {
    method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify({ model: "openai/gpt-5", ...body }),
  });

  it("is refused when the rule hands out placeholders: OpenAI's copy would give [EMAIL_1] two meanings", async () => {
    const before = native.requests.length;
    const res = await post(KEY, { conversation: "conv_123", input: "also bob@example.com" });
    const body = (await res.json()) as any;
    expect(res.status).toBe(400);
    expect(body.error.code).toBe("INVALID_REQUEST");
    expect(body.error.details.field).toBe("conversation");
    expect(body.error.message).toContain("redact_with: mask");
    expect(body.error.message).toContain("previous_response_id");
    expect(native.requests.length).toBe(before);
  });

  it("goes on to OpenAI when the project's redact rules all mask", async () => {
    const res = await post(MASKED, { conversation: "conv_123", input: "also bob@example.com" });
    expect(res.status, await res.text()).toBe(200);
    const sent = native.requests.at(-1)!.body;
    expect(sent.conversation).toBe("conv_123");
    expect(JSON.stringify(sent.input)).toContain("[REDACTED:EMAIL]");
  });
});
