// A Gemini client on an OpenAI model asks for a tool call; the upstream streams part of the call's arguments and then
// drops the connection. Gemini's function calls go out whole, so the gateway holds the arguments and the client had
// no byte yet — but the upstream had begun answering (it read the prompt, it was generating): that is "after the first
// event" (docs/routing.md), not a stream that failed before it. One upstream call, never asked again; the client gets
// the failure in Google's envelope; the ledger bills the estimate of the input. Before, the gateway asked the
// upstream a second time without telling the client, then answered "All 2 attempts failed" and billed $0.
// On the shipped gateway.yaml, against the fake OpenAI upstream.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerRecordOf, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "./helpers/shipped-config.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const MODEL = "openai/gpt-4.1";
/** The fake's frames: the role chunk, the call's start (id, name), then its arguments five characters a chunk. */
const CUT_AFTER = 1 + 1 + 4;

let fake: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  const config = shippedConfig({ openai: fake.baseUrl, anthropic: "http://127.0.0.1:9" });
  gw = await startTestGateway(config, { env: providerEnv(config) });
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const ask = {
  contents: [{ role: "user", parts: [{ text: "Write the weather of Paris to a file." }] }],
  tools: [{ functionDeclarations: [{ name: "write_file", parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string" } } } }] }],
};

describe("a Gemini client's tool call cut by the upstream midway", () => {
  it("is asked of the upstream once, answered with Google's error and billed the estimate of its input", async () => {
    // Every attempt is cut the same way: a retry would be a second cut call, never a rescue.
    fake.failures.push({ kind: "die-mid-stream", afterChunks: CUT_AFTER }, { kind: "die-mid-stream", afterChunks: CUT_AFTER });
    const before = fake.requests.length;
    const res = await fetch(`${gw.url}/api/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": SHIPPED_KEY },
      body: JSON.stringify(ask),
    });
    const text = await res.text();
    fake.failures.length = 0;
    expect(fake.requests.length - before).toBe(1);
    // Nothing had reached the client: the failure is its answer, in Google's envelope, not a silent second call.
    expect(res.status).toBe(502);
    const body = JSON.parse(text);
    expect(body.error).toMatchObject({ code: 502, status: "UNAVAILABLE" });
    expect(body.error.message).not.toMatch(/attempts failed/);
    const rec = await ledgerRecordOf(gw, res.headers.get("x-request-id"));
    expect(rec).toMatchObject({ attempts: 1, status: 502, estimated: true });
    // The upstream read the prompt: its input is billed (the estimate: the stream was cut before its usage).
    expect(rec.inputTokens).toBeGreaterThan(0);
    expect(Number(rec.costUsd)).toBeGreaterThan(0);
  });
});
