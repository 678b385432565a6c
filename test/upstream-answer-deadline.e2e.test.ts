// A hostile upstream that answers at once and then trickles (one space a second into a JSON answer, only
// `: keepalive` comments into a stream) reset the per-read timer (server.upstream_timeout_ms) with every byte: the
// client waited with nothing until it gave up. server.upstream_answer_timeout_ms now bounds a JSON answer's whole
// body and a stream's wait for its first event: past it the request is a 504 UPSTREAM_TIMEOUT, recorded once.
// And a native Gemini stream that ends without a finishReason (cut short: Gemini has no end marker) ends with
// Google's error frame and is recorded stream_error, as the translated pairs already did.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, ledgerRecordOf, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startTrickleUpstream, type TrickleUpstream } from "./upstreams/trickle.ts";
import { FAKE_BEDROCK_API_KEY } from "./upstreams/bedrock.ts";

const KEY = testKey("answer-deadline");
const ANSWER_MS = 1500;

let up: TrickleUpstream;
let gw: TestGateway;

beforeAll(async () => {
  up = await startTrickleUpstream();
  gw = await startTestGateway({
    server: { upstream_timeout_ms: 500, upstream_answer_timeout_ms: ANSWER_MS },
    store: { kind: "sqlite", path: "./data/gateway.db" },
    routing: { max_attempts: 1 },
    providers: {
      up: { protocol: "openai", base_url: `${up.origin}/v1`, api_key: "sk-fake-upstream" },
      gem: { protocol: "gemini", base_url: up.origin, api_key: "fake-gemini-key" },
      aws: { protocol: "bedrock", region: "us-west-2", base_url: up.origin, api_key: FAKE_BEDROCK_API_KEY },
    },
    models: {
      "test/slow": { endpoints: [{ provider: "up", model: "trickle", pricing: { input: "0.000001", output: "0.000002" } }] },
      "test/slow-bedrock": { endpoints: [{ provider: "aws", model: "trickle", pricing: { input: "0.000001", output: "0.000002" } }] },
      "test/cut": { endpoints: [{ provider: "gem", model: "cut", pricing: { input: "0.000001", output: "0.000002" } }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
}, 30_000);
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

let n = 0;
async function chat(stream: boolean, model = "test/slow") {
  const requestId = `req-deadline-${++n}`;
  const started = Date.now();
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "hi" }] }),
    signal: AbortSignal.timeout(15_000), // the client's own patience: far past the bound
  });
  const text = await res.text();
  return { res, text, requestId, elapsed: Date.now() - started };
}

describe("an upstream that trickles bytes but never an answer", () => {
  it.each([
    ["a JSON answer trickled one space at a time", false, "test/slow"],
    ["a stream of nothing but keepalive comments", true, "test/slow"],
    ["a Bedrock event stream whose first frame comes one byte at a time", true, "test/slow-bedrock"],
  ])("%s: 504 UPSTREAM_TIMEOUT once upstream_answer_timeout_ms has passed, one ledger record", async (_name, stream, model) => {
    const { res, text, requestId, elapsed } = await chat(stream, model);
    expect(res.status, text.slice(0, 300)).toBe(504);
    expect(JSON.parse(text).error.code).toBe("UPSTREAM_TIMEOUT");
    expect(elapsed).toBeGreaterThanOrEqual(ANSWER_MS - 50);
    expect(elapsed).toBeLessThan(ANSWER_MS + 3000);
    const rec = await ledgerRecordOf(gw, requestId);
    expect(rec).toMatchObject({ status: 504 });
    expect((await gw.gateway.store.ledger({})).filter((e) => e.requestId === requestId)).toHaveLength(1);
    // The upstream connection was dropped, not left trickling.
    await expect.poll(() => up.open, { timeout: 2000 }).toBe(0);
  });
});

describe("a native Gemini stream cut short (no finishReason)", () => {
  it("ends with Google's error frame after the content it relayed, and is recorded stream_error", async () => {
    const requestId = "req-gemini-cut";
    const res = await fetch(`${gw.url}/api/v1beta/models/test/cut:streamGenerateContent?alt=sse`, {
      method: "POST",
      headers: { "x-goog-api-key": KEY, "content-type": "application/json", "x-request-id": requestId },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Tell me a story" }] }] }),
    });
    expect(res.status).toBe(200);
    // Read up to the cut: after the error frame the connection is closed without a clean end (docs/gemini.md "Streams").
    const reader = res.body!.getReader();
    let text = "";
    for (;;) {
      const step = await reader.read().catch(() => undefined);
      expect(step?.done, "the stream ended cleanly").not.toBe(true);
      if (!step) break;
      text += Buffer.from(step.value!).toString("utf8");
    }
    const frames = text.split(/\r?\n\r?\n/).filter(Boolean).map((f) => JSON.parse(f.replace(/^data: /, "")));
    expect(frames[0].candidates[0].content.parts[0].text).toBe("Once upon");
    expect(frames.at(-1).error).toMatchObject({ code: 502, details: [expect.objectContaining({ reason: "UPSTREAM_ERROR" })] });
    expect(frames.at(-1).error.message).toContain("before a finish reason");
    const rec = await ledgerRecordOf(gw, requestId);
    expect(rec.outcome).toBe("stream_error");
  });
});
