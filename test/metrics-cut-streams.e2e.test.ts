// A stream that fails after its 200 went out (the upstream cuts the socket, a shutdown ends it) or whose client
// leaves mid-way, as /metrics and the access log see it: counted by the error it ended with (not as a 200 success),
// its upstream attempt an error (or cancelled, when the request's own abort cut it), and its billed (estimated) tokens
// in gateway_tokens_total as in the ledger.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import type { RunningGateway } from "../core/server.ts";

const KEY = testKey("cutstreams");
const MODEL = "test/cut";
const TEXT = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ");

let fake: FakeOpenAI;
let gw: RunningGateway;
let log: CapturedLog;
let baseURL: string;

const config = (url: string) => ({
  store: { kind: "memory" },
  routing: { max_attempts: 1, circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } },
  providers: { up: { protocol: "openai", base_url: url, api_key: "sk-fake-upstream" } },
  models: { [MODEL]: { endpoints: [{ provider: "up", model: "m", pricing: { input: "0.000002", output: "0.00001" } }] } },
  projects: { p: { keys: [keyEntry("k", KEY)] } },
});

beforeAll(async () => {
  fake = await startFakeOpenAI({ text: TEXT });
  ({ gw, log, baseURL } = await startLoggedGateway(config(fake.baseUrl)));
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const values = async (g: RunningGateway, name: string) => (await g.gateway.metrics.registry.getSingleMetric(name)!.get()).values;
/** gateway_upstream_duration_seconds observations with this outcome. */
const upstreamCount = async (g: RunningGateway, outcome: string) =>
  (await values(g, "gateway_upstream_duration_seconds")).find((v) => (v as { metricName?: string }).metricName === "gateway_upstream_duration_seconds_count" && v.labels.outcome === outcome)?.value ?? 0;
const sum = async (g: RunningGateway, name: string, labels: Record<string, string>) =>
  (await values(g, name)).filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((n, v) => n + v.value, 0);

/** Opens a stream and reads it to its end (or reads `chunks` reads of it, then leaves). */
async function stream(base: string, requestId: string, chunks = Infinity): Promise<string> {
  const ac = new AbortController();
  const res = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: "user", content: "hi" }] }),
    signal: ac.signal,
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (let i = 0; i < chunks; i++) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
  }
  ac.abort();
  return text;
}

async function accessLine(l: CapturedLog, requestId: string): Promise<Record<string, any>> {
  const [line] = await l.accessOnce((r) => r.requestId === requestId, 1);
  if (!line) throw new Error(`no access line for ${requestId}`);
  return line;
}

describe("a stream the upstream cuts after its first chunks", () => {
  it("is a 502 in gateway_requests_total and an error attempt upstream; the access line keeps the 200 sent, with stream_error", async () => {
    fake.failures.push({ kind: "die-mid-stream", afterChunks: 3 });
    const text = await stream(baseURL, "req-cut-1");
    expect(text).toContain('"code":"UPSTREAM_ERROR"');
    const line = await accessLine(log, "req-cut-1");
    expect(await sum(gw, "gateway_requests_total", { endpoint: "chat", model: MODEL, provider: "up", code: "502" })).toBe(1);
    expect(await sum(gw, "gateway_requests_total", { code: "200" })).toBe(0);
    expect(await upstreamCount(gw, "error")).toBe(1);
    expect(await upstreamCount(gw, "ok")).toBe(0);
    expect(line).toMatchObject({ status: 200, errorCode: "UPSTREAM_ERROR", outcome: "stream_error", stream: true, aborted: false });
  });

  it("its tokens (estimated, as billed) are in gateway_tokens_total, the same figures as its access line", async () => {
    const before = await sum(gw, "gateway_tokens_total", { direction: "output" });
    const inputBefore = await sum(gw, "gateway_tokens_total", { direction: "input" });
    fake.failures.push({ kind: "die-mid-stream", afterChunks: 4 });
    await stream(baseURL, "req-cut-2");
    const line = await accessLine(log, "req-cut-2");
    expect(line.outputTokens).toBeGreaterThan(0);
    expect(await sum(gw, "gateway_tokens_total", { direction: "output", model: MODEL, provider: "up" }) - before).toBe(line.outputTokens);
    expect(await sum(gw, "gateway_tokens_total", { direction: "input" }) - inputBefore).toBe(line.inputTokens);
  });
});

describe("a stream whose client leaves mid-way", () => {
  it("its billed tokens are in gateway_tokens_total; its upstream attempt is cancelled, not an error", async () => {
    const before = await sum(gw, "gateway_tokens_total", { direction: "output" });
    const errorsBefore = await upstreamCount(gw, "error");
    fake.failures.push({ kind: "slow", chunkDelayMs: 40 });
    await stream(baseURL, "req-left-1", 2);
    const line = await accessLine(log, "req-left-1");
    expect(line.outputTokens).toBeGreaterThan(0);
    expect(await sum(gw, "gateway_tokens_total", { direction: "output" }) - before).toBe(line.outputTokens);
    expect(await upstreamCount(gw, "error")).toBe(errorsBefore);
    expect(await upstreamCount(gw, "cancelled")).toBe(1);
    expect(line).toMatchObject({ aborted: true, outcome: "aborted" });
  });
});

describe("a client that leaves before the response began, and one that leaves mid-stream (README: the code label)", () => {
  it("the first counts as code 499, nothing having been sent; the second keeps the 200 it was sent; both attempts are cancelled", async () => {
    const labels = { endpoint: "chat", model: MODEL, provider: "up" };
    const before = { c499: await sum(gw, "gateway_requests_total", { ...labels, code: "499" }), c200: await sum(gw, "gateway_requests_total", { ...labels, code: "200" }), cancelled: await upstreamCount(gw, "cancelled") };
    fake.failures.push({ kind: "hang" });
    const ac = new AbortController();
    const res = fetch(`${baseURL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-request-id": "req-left-early" },
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }] }),
      signal: ac.signal,
    });
    setTimeout(() => ac.abort(), 200);
    await expect(res).rejects.toThrow();
    await accessLine(log, "req-left-early");
    expect(await sum(gw, "gateway_requests_total", { ...labels, code: "499" }) - before.c499).toBe(1);
    fake.failures.push({ kind: "slow", chunkDelayMs: 40 });
    await stream(baseURL, "req-left-late", 2);
    await accessLine(log, "req-left-late");
    expect(await sum(gw, "gateway_requests_total", { ...labels, code: "200" }) - before.c200).toBe(1);
    expect(await upstreamCount(gw, "cancelled") - before.cancelled).toBe(2);
  });
});

describe("a stream cut by a shutdown", () => {
  it("is counted by the shutdown's 503, not as a 200, and its upstream attempt as cancelled, not ok", async () => {
    const slow = await startFakeOpenAI({ text: TEXT, chunkDelayMs: 100 });
    const own = await startLoggedGateway(config(slow.baseUrl));
    try {
      const base = own.baseURL;
      const done = stream(base, "req-shutdown-1");
      await new Promise((r) => setTimeout(r, 300)); // the stream is under way
      await own.gw.shutdown({ graceMs: 50 });
      const text = await done;
      expect(text).toContain('"error"');
      const line = await accessLine(own.log, "req-shutdown-1");
      expect(await sum(own.gw, "gateway_requests_total", { endpoint: "chat", code: "503" })).toBe(1);
      expect(await sum(own.gw, "gateway_requests_total", { code: "200" })).toBe(0);
      expect(line).toMatchObject({ status: 200, outcome: "stream_error" });
      expect(await upstreamCount(own.gw, "cancelled")).toBe(1);
      expect(await upstreamCount(own.gw, "ok")).toBe(0);
    } finally {
      await own.gw.close().catch(() => {});
      await slow.close();
    }
  });
});
