// Bedrock's binary event stream was left out when answers past the gateway's size bounds became endpoint faults
// (test/answer-too-large.e2e.test.ts): a well-formed 20 MiB frame was "a corrupt event stream", retried on the same
// endpoint (the provider generating and billing it again), the client not told to stop, and
// server.upstream_limits.event_chars did not move the bound. Now such a frame is the same event_too_large 502 as an
// SSE event past the bound: that endpoint is asked once, the model's next endpoint is still tried, and the client is
// told the bound, the setting and not to retry.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FAKE_AWS, startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, ledgerRecordOf, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("bedrock-large");
const LLAMA = "us.meta.llama3-3-70b-instruct-v1:0";
const CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const MiB = 1024 * 1024;
const BOUND = 16 * MiB;
const SMALL = 4096;

let bedrock: FakeBedrock;
let backup: FakeOpenAI;
let gw: TestGateway;
/** server.upstream_limits.event_chars 4 KiB: an 8 KiB frame is past it. */
let small: TestGateway;

const aws = { protocol: "bedrock", region: FAKE_AWS.region, aws_access_key_id: FAKE_AWS.accessKeyId, aws_secret_access_key: FAKE_AWS.secretAccessKey };
const pricing = { input: "0.000001", output: "0.000002" };

beforeAll(async () => {
  bedrock = await startFakeBedrock();
  backup = await startFakeOpenAI({ text: "backup answers" });
  const providers = { aws: { ...aws, base_url: bedrock.baseUrl }, backup: { protocol: "openai", base_url: backup.baseUrl, api_key: "sk-fake-upstream" } };
  const projects = { p: { keys: [keyEntry("k", KEY)] } };
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { backoff_ms: 1, circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } },
    providers,
    models: {
      "test/llama": { endpoints: [{ provider: "aws", model: LLAMA, pricing }] },
      "test/claude": { endpoints: [{ provider: "aws", model: CLAUDE, pricing }] },
      "test/llama-then-backup": { endpoints: [{ provider: "aws", model: LLAMA, pricing }, { provider: "backup", model: "gpt-4o-mini", pricing }] },
    },
    projects,
  });
  small = await startTestGateway({
    server: { upstream_limits: { event_chars: SMALL } },
    store: { kind: "memory" },
    providers,
    models: { "test/llama": { endpoints: [{ provider: "aws", model: LLAMA, pricing }] } },
    projects,
  });
}, 30_000);

afterAll(async () => {
  await small?.close();
  await gw?.close();
  await bedrock?.close();
  await backup?.close();
});

beforeEach(() => {
  bedrock.failures.length = 0;
});

/** Every answer to the next `n` streams holds a frame of `bytes` after its messageStart, as the same request would again. */
const large = (bytes: number, path: string, n = 4) => {
  for (let i = 0; i < n; i++) bedrock.failures.push({ kind: "large", afterEvents: 1, bytes, path });
};
const calls = (action: string) => bedrock.requests.filter((r) => r.action === action).length;

const chat = (base: string, requestId: string, model: string) =>
  postJson(`${base}/chat/completions`, { model, stream: true, messages: [{ role: "user", content: "Write a lot" }] }, { authorization: `Bearer ${KEY}`, "x-request-id": requestId });

describe("a Bedrock event-stream frame past the event bound", () => {
  it("ConverseStream, 20 MiB past the default 16 MiB: the endpoint is asked once, and the client is told the bound, the setting and not to retry", async () => {
    large(20 * MiB, `/model/${encodeURIComponent(LLAMA)}/converse-stream`);
    const before = calls("converse-stream");
    const r = await chat(gw.baseURL, "frame-converse", "test/llama");
    expect(calls("converse-stream") - before, "upstream calls for the one endpoint").toBe(1);
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({
      code: "UPSTREAM_ERROR",
      details: { provider: "aws", reason: "event_too_large", limit_chars: BOUND, setting: "server.upstream_limits.event_chars" },
    });
    expect(r.json.error.message).toContain("server.upstream_limits.event_chars");
    expect(r.json.error.message).not.toContain("corrupt");
    expect(r.headers.get("x-should-retry")).toBe("false");
    expect(r.headers.get("retry-after")).toBeNull();
    expect(await ledgerRecordOf(gw, "frame-converse")).toMatchObject({ status: 502, outcome: "error", attempts: 1 });
  });

  it("InvokeModelWithResponseStream (a Messages client on Claude): the same, asked once", async () => {
    large(20 * MiB, `/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`);
    const before = calls("invoke-with-response-stream");
    const r = await postJson(`${gw.baseURL}/messages`, { model: "test/claude", max_tokens: 64, stream: true, messages: [{ role: "user", content: "Write a lot" }] },
      { "x-api-key": KEY, "anthropic-version": "2023-06-01" });
    expect(calls("invoke-with-response-stream") - before, "upstream calls for the one endpoint").toBe(1);
    expect(r.status).toBe(502);
    expect(r.headers.get("x-should-retry")).toBe("false");
    expect(r.json).toMatchObject({ type: "error", error: { code: "UPSTREAM_ERROR", details: { reason: "event_too_large", setting: "server.upstream_limits.event_chars" } } });
  });

  it("the model's next endpoint still serves; the Bedrock endpoint is not asked again", async () => {
    large(20 * MiB, `/model/${encodeURIComponent(LLAMA)}/converse-stream`);
    const before = calls("converse-stream"), backupBefore = backup.requests.length;
    const r = await chat(gw.baseURL, "frame-fallback", "test/llama-then-backup");
    expect(r.status).toBe(200);
    expect(r.text).toContain("backup");
    expect(calls("converse-stream") - before).toBe(1);
    expect(backup.requests.length - backupBefore).toBe(1);
    expect(await ledgerRecordOf(gw, "frame-fallback")).toMatchObject({ status: 200, provider: "backup", attempts: 2 });
  });

  it("server.upstream_limits.event_chars sets the bound: an 8 KiB frame past 4 KiB is refused the same way", async () => {
    large(2 * SMALL, `/model/${encodeURIComponent(LLAMA)}/converse-stream`);
    const before = calls("converse-stream");
    const r = await chat(small.baseURL, "frame-small", "test/llama");
    expect(calls("converse-stream") - before).toBe(1);
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({ details: { reason: "event_too_large", limit_chars: SMALL, setting: "server.upstream_limits.event_chars" } });
  });

  it("a corrupt frame before the first event is still retried (another try may pass)", async () => {
    bedrock.failures.push({ kind: "corrupt", afterEvents: 1, path: `/model/${encodeURIComponent(LLAMA)}/converse-stream` });
    const before = calls("converse-stream");
    const r = await chat(gw.baseURL, "frame-corrupt", "test/llama");
    expect(r.status).toBe(200);
    expect(calls("converse-stream") - before).toBe(2);
  });
});
