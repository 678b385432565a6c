// Access logs, redaction and the observability response headers, end to end: a real gateway whose every log line
// is captured, fake OpenAI upstreams (JSON, streams, a fallback, a failure, a client that leaves mid-stream).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import type { RunningGateway } from "../core/server.ts";

const KEY = testKey("accesslog");
const OWN = testKey("byokproj");
const WRONG = testKey("notakey");
const PROVIDER_KEY = "sk-fake-upstream"; // the one key the fake upstreams accept
const BYOK_KEY = "sk-byok-secret-4d2e8b10";
const PRICING = { input: "0.000002", output: "0.00001" };

let alpha: FakeOpenAI;
let beta: FakeOpenAI;
let gammaUp: FakeOpenAI;
let byokSeen: string[] = [];
let gw: RunningGateway;
let log: CapturedLog;
let baseURL: string;

const chat = (model: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}, key = KEY) =>
  postJson(`${baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "hi there" }], ...extra }, { authorization: `Bearer ${key}`, ...headers });

/** The access line of a request (they are written once the response is complete, so wait for it). */
async function accessLine(requestId: string): Promise<Record<string, any>> {
  const [line] = await log.accessOnce((r) => r.requestId === requestId, 1);
  if (!line) throw new Error(`no access line for ${requestId}`);
  return line;
}

beforeAll(async () => {
  alpha = await startFakeOpenAI({ text: "alpha answers in a few words" });
  beta = await startFakeOpenAI({ text: "beta answers" });
  // The BYOK provider's upstream takes the project's own key (the fakes only know their one key: swap it in).
  gammaUp = await startFakeOpenAI({ text: "gamma answers" });
  gammaUp.hook = (req) => {
    const auth = String(req.headers.authorization);
    byokSeen.push(auth);
    if (auth === `Bearer ${BYOK_KEY}`) req.headers.authorization = `Bearer ${PROVIDER_KEY}`;
    return false;
  };
  const provider = (url: string, key: string) => ({ protocol: "openai", base_url: url, api_key: key });
  ({ gw, log, baseURL } = await startLoggedGateway({
    store: { kind: "memory" },
    routing: { backoff_ms: 1 },
    providers: { alpha: provider(alpha.baseUrl, PROVIDER_KEY), beta: provider(beta.baseUrl, PROVIDER_KEY), gamma: provider(gammaUp.baseUrl, "${GAMMA_UNSET}") },
    models: {
      "test/duo": { endpoints: [{ provider: "alpha", model: "a-model", pricing: PRICING }, { provider: "beta", model: "b-model", pricing: PRICING }] },
      "test/byok": { endpoints: [{ provider: "gamma", model: "g-model", pricing: PRICING }] },
    },
    projects: {
      p: { keys: [keyEntry("k-main", KEY)] },
      own: { keys: [keyEntry("k-own", OWN)], providers: { gamma: { api_key: BYOK_KEY } } },
    },
  }));
});

afterAll(async () => {
  await gw?.close();
  await alpha?.close();
  await beta?.close();
  await gammaUp?.close();
});

describe("access log", () => {
  it("a JSON chat: one line with ids, project, key id, model, attempt, tokens, cost, timings and bytes", async () => {
    const body = { model: "test/duo", messages: [{ role: "user", content: "hi there" }] };
    const r = await chat("test/duo", {}, { "x-request-id": "req-json-1" });
    expect(r.status).toBe(200);
    const line = await accessLine("req-json-1");
    expect(line).toMatchObject({
      level: 30,
      msg: "request",
      generationId: r.json.providerMetadata.gateway.generationId,
      project: "p",
      keyId: "k-main",
      method: "POST",
      path: "/api/v1/chat/completions",
      endpoint: "chat",
      model: "test/duo",
      provider: "alpha",
      attempts: [{ provider: "alpha", model: "test/duo", status: 200 }],
      status: 200,
      stream: false,
      aborted: false,
      inputTokens: r.json.usage.prompt_tokens,
      outputTokens: r.json.usage.completion_tokens,
      costUsd: r.headers.get("x-mg-cost-usd"),
    });
    expect(typeof line.time).toBe("string");
    expect(line.errorCode).toBeUndefined();
    expect(line.ttfbMs).toBeGreaterThan(0);
    expect(line.durationMs).toBeGreaterThanOrEqual(line.ttfbMs);
    expect(line.bytesIn).toBeGreaterThan(JSON.stringify(body).length); // body plus request line and headers
    expect(line.bytesOut).toBeGreaterThan(r.text.length); // body plus status line and headers
    expect(log.access().filter((l) => l.requestId === "req-json-1")).toHaveLength(1);
  });

  it("a stream: stream true, usage, and the caller's trace id from traceparent (tracing off)", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const r = await chat("test/duo", { stream: true, stream_options: { include_usage: true } }, { "x-request-id": "req-stream-1", traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    expect(r.status).toBe(200);
    const line = await accessLine("req-stream-1");
    expect(line).toMatchObject({ traceId, stream: true, status: 200, provider: "alpha", aborted: false });
    expect(line.outputTokens).toBeGreaterThan(0);
    expect(line.bytesOut).toBeGreaterThan(r.text.length);
  });

  it("an invalid traceparent (all-zero trace or parent id, version ff): no trace id, not the bad one (tracing off)", async () => {
    const zeros = "0".repeat(32);
    const headers = [`00-${zeros}-00f067aa0ba902b7-01`, `00-4bf92f3577b34da6a3ce929d0e0e4736-${"0".repeat(16)}-01`, "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"];
    for (const [i, traceparent] of headers.entries()) {
      const r = await chat("test/duo", {}, { "x-request-id": `req-badtrace-${i}`, traceparent });
      expect(r.status).toBe(200);
      expect((await accessLine(`req-badtrace-${i}`)).traceId).toBeUndefined();
    }
  });

  it("a fallback: every attempt with its provider and status; the final status and provider", async () => {
    alpha.failures.push({ kind: "status", status: 500, body: { error: { message: "boom", type: "server_error" } } });
    const r = await chat("test/duo", {}, { "x-request-id": "req-fallback-1" });
    expect(r.status).toBe(200);
    const line = await accessLine("req-fallback-1");
    expect(line.attempts).toMatchObject([
      { provider: "alpha", status: 502, errorCode: "UPSTREAM_ERROR" },
      { provider: "beta", status: 200 },
    ]);
    expect(line).toMatchObject({ status: 200, provider: "beta" });
  });

  it("a failure: the final status and error code", async () => {
    alpha.failures.push({ kind: "status", status: 500 });
    beta.failures.push({ kind: "status", status: 503 });
    const r = await chat("test/duo", {}, { "x-request-id": "req-failed-1" });
    expect(r.status).toBe(502);
    const line = await accessLine("req-failed-1");
    expect(line).toMatchObject({ status: 502, errorCode: "UPSTREAM_ERROR", project: "p" });
    expect(line.attempts).toHaveLength(2);
    expect(line.costUsd).toBeUndefined();
  });

  it("a client that leaves mid-stream: aborted true", async () => {
    alpha.failures.push({ kind: "slow", chunkDelayMs: 40 });
    const ac = new AbortController();
    const res = await fetch(`${baseURL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-request-id": "req-abort-1" },
      body: JSON.stringify({ model: "test/duo", stream: true, messages: [{ role: "user", content: "hi" }] }),
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    const line = await accessLine("req-abort-1");
    expect(line).toMatchObject({ aborted: true, stream: true, provider: "alpha" });
  });

  it("a client that leaves before its body ends: its 499, not a 500 INTERNAL of the gateway's, and no error logged", async () => {
    const { port } = new URL(baseURL);
    const socket = connect(Number(port), "127.0.0.1");
    socket.on("error", () => {});
    await new Promise<void>((r) => socket.once("connect", () => r()));
    socket.write(`POST /api/v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\n` +
      `Content-Length: 1000\r\nX-Request-Id: req-left-mid-body\r\n\r\n{"model":"test/duo","messages":[`);
    await sleep(100);
    socket.destroy();
    const line = await accessLine("req-left-mid-body");
    expect(line).toMatchObject({ status: 499, aborted: true });
    expect(line.errorCode).not.toBe("INTERNAL");
    expect(log.records().filter((r) => r.level >= 50 && r.requestId === "req-left-mid-body")).toEqual([]);
  });

  it("a refused key: the 401 with its code, and no project", async () => {
    const r = await chat("test/duo", {}, { "x-request-id": "req-401" }, WRONG);
    expect(r.status).toBe(401);
    const line = await accessLine("req-401");
    expect(line.status).toBe(401);
    expect(typeof line.errorCode).toBe("string");
    expect(line.project).toBeUndefined();
    expect(line.attempts).toEqual([]);
  });
});

describe("response headers", () => {
  it("JSON: generation id, provider, cost and server-timing", async () => {
    const r = await chat("test/duo");
    const gen = r.json.providerMetadata.gateway;
    expect(r.headers.get("x-mg-generation-id")).toBe(gen.generationId);
    expect(r.headers.get("x-mg-provider")).toBe("alpha");
    const { prompt_tokens: input, completion_tokens: output } = r.json.usage;
    const expected = (input * 2 + output * 10) / 1e6;
    expect(Number(r.headers.get("x-mg-cost-usd"))).toBeCloseTo(expected, 12);
    expect(Number(r.headers.get("x-mg-cost-usd"))).toBeGreaterThan(0);
    expect(r.headers.get("server-timing")).toMatch(/^gateway;dur=\d+\.\d, upstream;dur=\d+\.\d$/);
  });

  it("a stream: generation id and provider at once; its cost is not known yet, so no cost header", async () => {
    const r = await chat("test/duo", { stream: true });
    expect(r.headers.get("x-mg-generation-id")).toMatch(/\S/);
    expect(r.headers.get("x-mg-provider")).toBe("alpha");
    expect(r.headers.get("x-mg-cost-usd")).toBeNull();
    expect(r.headers.get("server-timing")).toMatch(/^gateway;dur=\d+\.\d, upstream;dur=\d+\.\d$/);
  });

  it("an error before any upstream: no generation id (no ledger record has one) and the gateway's own time only", async () => {
    const r = await chat("test/duo", {}, {}, WRONG);
    expect(r.headers.get("x-mg-generation-id")).toBeNull();
    expect(r.headers.get("x-mg-provider")).toBeNull();
    expect(r.headers.get("server-timing")).toMatch(/^gateway;dur=\d+\.\d$/);
    // Nor does its access line: a generation id there would find no record.
    expect((await accessLine(r.headers.get("x-request-id")!)).generationId).toBeUndefined();
  });

  it("an idempotent replay's access line logs the generation id the client got (the original's), so it finds the record", async () => {
    const headers = { "idempotency-key": `al-${Date.now()}` };
    const first = await chat("test/duo", {}, headers);
    const again = await chat("test/duo", {}, headers);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const id = first.headers.get("x-mg-generation-id");
    expect(again.headers.get("x-mg-generation-id")).toBe(id);
    expect((await accessLine(again.headers.get("x-request-id")!)).generationId).toBe(id);
  });
});

describe("redaction", () => {
  it("no key (gateway, provider, BYOK, a refused one) appears in any line written, at debug level", async () => {
    const byok = await chat("test/byok", {}, {}, OWN);
    expect(byok.status).toBe(200);
    expect(byokSeen).toEqual([`Bearer ${BYOK_KEY}`]);
    const messages = await postJson(`${baseURL}/messages`, { model: "test/duo", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }, { "x-api-key": KEY, "anthropic-version": "2023-06-01" });
    expect(messages.status).toBe(200);
    await chat("test/duo", {}, {}, WRONG);
    await sleep(50);
    expect(log.lines.length).toBeGreaterThan(8);
    const all = log.lines.join("\n");
    for (const secret of [KEY, OWN, WRONG, PROVIDER_KEY, BYOK_KEY]) expect(all).not.toContain(secret);
    // and the same keys written on purpose under the redacted paths are censored
    const { captureLogger } = await import("./helpers/log-capture.ts");
    const c = captureLogger("debug");
    c.logger.warn("oops", { headers: { authorization: `Bearer ${KEY}`, "x-api-key": KEY }, provider: { apiKey: PROVIDER_KEY }, target: { credentials: { apiKey: BYOK_KEY } } });
    expect(c.log.lines).toHaveLength(1);
    for (const secret of [KEY, PROVIDER_KEY, BYOK_KEY]) expect(c.log.lines[0]).not.toContain(secret);
    expect(c.log.lines[0]).toContain("[redacted]");
  });
});
