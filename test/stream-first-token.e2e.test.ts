// Streams and their first token, end to end: an upstream's empty 200 stream falls back instead of being billed as an
// empty answer; time to first token (ledger, latency_last_1h) is the first chunk with output, not a role-only chunk;
// only streamed requests have a ttft, so the console's "streamed" is right for JSON answers on every protocol.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { startTestGateway, testKey, keyEntry, ledgerRecordOf, postJson, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "./upstreams/openai.ts";
import { startFakeAnthropic, FAKE_ANTHROPIC_KEY, type FakeAnthropic } from "./upstreams/anthropic.ts";

const KEY = testKey("firsttoken");
const SANDBOX = testKey("firsttokensbx", true);

let alpha: FakeOpenAI;
let beta: FakeOpenAI;
/** Scripted Anthropic-protocol upstream (the fake's hook answers every request, whatever the path). */
let scripted: FakeOpenAI;
let claude: FakeAnthropic;
let gw: TestGateway;

const sse = (res: ServerResponse) => res.writeHead(200, { "content-type": "text/event-stream" });
const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-x", object: "chat.completion.chunk", created: 1, model: "a-model", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** A 200 stream holding nothing but `data: [DONE]` (what some proxies send when the model failed). */
const onlyDone = (req: RecordedRequest, res: ServerResponse): boolean => {
  if (req.body?.stream !== true) return false;
  sse(res);
  res.end("data: [DONE]\n\n");
  return true;
};

/** The role chunk at once, the first text `gapMs` later (a real time to first token). */
const roleThenText = (gapMs: number) => (req: RecordedRequest, res: ServerResponse): boolean => {
  if (req.body?.stream !== true) return false;
  sse(res);
  res.write(chunk({ role: "assistant", content: "" }));
  setTimeout(() => res.end(chunk({ content: "late words" }) + chunk({}, "stop") + "data: [DONE]\n\n"), gapMs);
  return true;
};

const auth = { authorization: `Bearer ${KEY}` };
const streamChat = (model: string, extra: Record<string, unknown> = {}) =>
  postJson(`${gw.baseURL}/chat/completions`, { model, stream: true, messages: [{ role: "user", content: "hi" }], ...extra }, auth);

beforeAll(async () => {
  alpha = await startFakeOpenAI({ text: "alpha answers" });
  beta = await startFakeOpenAI({ text: "beta answers" });
  claude = await startFakeAnthropic();
  scripted = await startFakeOpenAI();
  const provider = (url: string) => ({ protocol: "openai", base_url: url, api_key: "sk-fake-upstream" });
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { backoff_ms: 10, circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } },
    providers: {
      alpha: provider(alpha.baseUrl), beta: provider(beta.baseUrl),
      claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      scripted: { protocol: "anthropic", base_url: scripted.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      sim: { protocol: "sim" },
    },
    models: {
      "test/duo": { context_window: 1000, max_tokens: 100, endpoints: [{ provider: "alpha", model: "a-model" }, { provider: "beta", model: "b-model" }] },
      "test/slow": { endpoints: [{ provider: "alpha", model: "a-slow" }] },
      "test/claude": { context_window: 100000, max_tokens: 1000, endpoints: [{ provider: "claude", model: "claude-x" }] },
      "test/sim": { endpoints: [{ provider: "sim", model: "sim-1" }] },
      "test/scripted": { context_window: 100000, max_tokens: 1000, endpoints: [{ provider: "scripted", model: "claude-s" }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY), keyEntry("s", SANDBOX)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await alpha?.close();
  await beta?.close();
  await claude?.close();
  await scripted?.close();
});

beforeEach(() => {
  alpha.hook = undefined;
  scripted.hook = undefined;
  alpha.requests.length = 0;
  beta.requests.length = 0;
});

describe("an empty 200 stream", () => {
  it("is retried on the next endpoint, invisibly: the client gets the next one's answer, billed to it", async () => {
    alpha.hook = onlyDone;
    const r = await streamChat("test/duo");
    expect(r.status).toBe(200);
    expect(r.headers.get("x-mg-resolved-provider")).toBe("beta");
    expect(r.text).toContain("beta");
    expect(r.text).not.toContain('"error"');
    expect(alpha.requests).toHaveLength(1);
    const rec = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(rec).toMatchObject({ provider: "beta", outcome: "ok", estimated: false });
  });

  it("a Messages API client is served the same way", async () => {
    alpha.hook = onlyDone;
    const r = await postJson(`${gw.baseURL}/messages`, { model: "test/duo", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] }, { "x-api-key": KEY, "anthropic-version": "2023-06-01" });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-mg-resolved-provider")).toBe("beta");
    expect(r.text).toContain("beta");
    expect(r.text).toContain("message_stop");
  });

  it("with nowhere else to go it is a 502 UPSTREAM_ERROR, not an empty answer", async () => {
    alpha.hook = onlyDone;
    const r = await streamChat("test/slow");
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({ code: "UPSTREAM_ERROR", message: expect.stringContaining("empty stream") });
  });
});

describe("time to first token", () => {
  it("is the first text, not the role chunk before it: in the ledger and in latency_last_1h", async () => {
    alpha.hook = roleThenText(400);
    for (let i = 0; i < 2; i++) {
      const r = await streamChat("test/slow");
      expect(r.text).toContain("late words");
      const rec = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
      expect(rec.ttftMs).toBeGreaterThanOrEqual(390);
    }
    const eps = (await fetch(`${gw.baseURL}/models/test/slow/endpoints`, { headers: auth }).then((x) => x.json())).data.endpoints;
    expect(eps[0].latency_last_1h.p50).toBeGreaterThanOrEqual(370); // histogram buckets are within 4 %
  });
});

describe("only streamed requests have a ttft (the console's 'streamed')", () => {
  const messages = (stream: boolean) =>
    postJson(`${gw.baseURL}/messages`, { model: "test/claude", max_tokens: 50, stream, messages: [{ role: "user", content: "hi" }] }, { "x-api-key": KEY, "anthropic-version": "2023-06-01" });

  it("an Anthropic-protocol upstream: JSON (native and translated for a chat client) has none, a stream has one", async () => {
    const json = await messages(false);
    expect(json.status).toBe(200);
    expect((await ledgerRecordOf(gw, json.headers.get("x-request-id"))).ttftMs).toBeNull();
    const chat = await postJson(`${gw.baseURL}/chat/completions`, { model: "test/claude", messages: [{ role: "user", content: "hi" }] }, auth);
    expect(chat.status).toBe(200);
    expect((await ledgerRecordOf(gw, chat.headers.get("x-request-id"))).ttftMs).toBeNull();
    const streamed = await messages(true);
    expect((await ledgerRecordOf(gw, streamed.headers.get("x-request-id"))).ttftMs).toEqual(expect.any(Number));
  });

  it("the simulator: JSON has none, a stream has one", async () => {
    const sbx = { authorization: `Bearer ${SANDBOX}` };
    const json = await postJson(`${gw.baseURL}/chat/completions`, { model: "test/sim", messages: [{ role: "user", content: "hi" }] }, sbx);
    expect(json.status).toBe(200);
    expect((await ledgerRecordOf(gw, json.headers.get("x-request-id"))).ttftMs).toBeNull();
    const streamed = await postJson(`${gw.baseURL}/chat/completions`, { model: "test/sim", stream: true, messages: [{ role: "user", content: "hi" }] }, sbx);
    expect((await ledgerRecordOf(gw, streamed.headers.get("x-request-id"))).ttftMs).toEqual(expect.any(Number));
  });
});

/** Anthropic events: message_start (42 input tokens), a ping every `pingMs`, the text `textAfterMs` later (or never). */
const claudeStream = (pingMs: number, textAfterMs?: number) => (_req: RecordedRequest, res: ServerResponse): boolean => {
  sse(res);
  const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event("message_start", { message: { id: "msg_1", type: "message", role: "assistant", model: "claude-s", content: [], stop_reason: null, usage: { input_tokens: 42, output_tokens: 1 } } });
  const pings = setInterval(() => event("ping", {}), pingMs);
  res.once("close", () => clearInterval(pings));
  if (textAfterMs !== undefined) {
    setTimeout(() => {
      clearInterval(pings);
      event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "thought hard" } });
      event("content_block_stop", { index: 0 });
      event("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } });
      event("message_stop", {});
      res.end();
    }, textAfterMs);
  }
  return true;
};

/** Each piece of the response body with the ms since the request, until it ends or `untilMs` passes. */
async function timedBody(url: string, body: unknown, headers: Record<string, string>, untilMs: number) {
  const t0 = Date.now();
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), untilMs);
  const pieces: Array<{ at: number; text: string }> = [];
  const dec = new TextDecoder();
  let res: Response | undefined;
  try {
    res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body), signal: ac.signal });
    for await (const b of res.body as unknown as AsyncIterable<Uint8Array>) pieces.push({ at: Date.now() - t0, text: dec.decode(b) });
  } catch {
    // the client left at untilMs
  }
  clearTimeout(timer);
  return { res, pieces, text: pieces.map((p) => p.text).join("") };
}

describe("the hold of a stream's opening events is bounded", () => {
  const claudeHeaders = { "x-api-key": KEY, "anthropic-version": "2023-06-01" };
  const messagesBody = { model: "test/scripted", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] };

  it("a long prefill: message_start goes out within about a second and each ping as it comes, not all at the first text", async () => {
    scripted.hook = claudeStream(300, 2500);
    const { res, pieces, text } = await timedBody(`${gw.baseURL}/messages`, messagesBody, claudeHeaders, 8000);
    expect(res?.status).toBe(200);
    expect(text).toContain("thought hard");
    expect(pieces[0]!.text).toContain("message_start");
    expect(pieces[0]!.at).toBeLessThan(2000);
    const beforeText = pieces.filter((p) => !p.text.includes("content_block") && p.at < 2400);
    expect(beforeText.length).toBeGreaterThanOrEqual(3); // pings arrive over time, not in one write with the text
  });

  it("a chat role chunk then only keepalive comments: the client has its 200 and the role chunk within about a second", async () => {
    alpha.hook = (req, res) => {
      if (req.body?.stream !== true) return false;
      sse(res);
      res.write(chunk({ role: "assistant", content: "" }));
      const keep = setInterval(() => res.write(": keepalive\n\n"), 200);
      setTimeout(() => {
        clearInterval(keep);
        res.end(chunk({ content: "late words" }) + chunk({}, "stop") + "data: [DONE]\n\n");
      }, 2500);
      return true;
    };
    const { res, pieces, text } = await timedBody(`${gw.baseURL}/chat/completions`, { model: "test/slow", stream: true, messages: [{ role: "user", content: "hi" }] }, auth, 8000);
    expect(res?.status).toBe(200);
    expect(pieces[0]!.at).toBeLessThan(2000);
    expect(pieces[0]!.text).toContain('"role":"assistant"');
    expect(text).toContain("late words");
  });

  it("a stream found empty after the hold let its role chunk go ends with an error event, recorded as a stream error", async () => {
    alpha.hook = (req, res) => {
      if (req.body?.stream !== true) return false;
      sse(res);
      res.write(chunk({ role: "assistant", content: "" }));
      setTimeout(() => res.end("data: [DONE]\n\n"), 1500);
      return true;
    };
    const r = await streamChat("test/slow");
    expect(r.status).toBe(200);
    expect(r.text).toContain("empty stream");
    expect(r.text).not.toContain("[DONE]");
    const rec = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect(rec.outcome).toBe("stream_error");
  });

  it("a client that leaves during the hold is billed what the upstream reported (message_start's input), or the input estimate", async () => {
    scripted.hook = claudeStream(200);
    const ids = [`hold-leave-a-${Date.now()}`, `hold-leave-c-${Date.now()}`];
    await timedBody(`${gw.baseURL}/messages`, messagesBody, { ...claudeHeaders, "x-request-id": ids[0]! }, 500);
    alpha.hook = (req, res) => {
      if (req.body?.stream !== true) return false;
      sse(res);
      res.write(chunk({ role: "assistant", content: "" }));
      return true; // never more
    };
    await timedBody(`${gw.baseURL}/chat/completions`, { model: "test/slow", stream: true, messages: [{ role: "user", content: "hi" }] }, { ...auth, "x-request-id": ids[1]! }, 500);
    const claudeRec = await ledgerRecordOf(gw, ids[0]!);
    expect(claudeRec).toMatchObject({ outcome: "aborted", inputTokens: 42 });
    const chatRec = await ledgerRecordOf(gw, ids[1]!);
    expect(chatRec.outcome).toBe("aborted");
    expect(chatRec.inputTokens).toBeGreaterThan(0);
    expect(chatRec.estimated).toBe(true);
  });

  it("an attempt's latency is to the upstream's first event, not to the end of the hold", async () => {
    alpha.hook = roleThenText(700);
    const r = await streamChat("test/slow");
    expect(r.text).toContain("late words");
    const rec = await ledgerRecordOf(gw, r.headers.get("x-request-id"));
    expect((rec as { attemptList?: Array<{ latencyMs: number }> }).attemptList![0]!.latencyMs).toBeLessThan(400);
    expect(rec.ttftMs).toBeGreaterThanOrEqual(690);
  });
});

describe("an upstream that opens a stream and then only pings is cut by the answer deadline, past the hold too", () => {
  // A gateway of its own, with a short server.upstream_answer_timeout_ms (at least upstream_timeout_ms, so both).
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({
      store: { kind: "memory" },
      server: { upstream_answer_timeout_ms: 2000, upstream_timeout_ms: 2000 },
      routing: { backoff_ms: 10, circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } },
      providers: { scripted: { protocol: "anthropic", base_url: scripted.baseUrl, api_key: FAKE_ANTHROPIC_KEY } },
      models: { "test/scripted": { context_window: 100000, max_tokens: 1000, endpoints: [{ provider: "scripted", model: "claude-s" }] } },
      projects: { p: { keys: [keyEntry("k", KEY)] } },
    });
  });
  afterAll(async () => {
    await g?.close();
  });

  it("a Gemini client (nothing to show for message_start or pings) gets an error within the deadline, not a wait for ever", async () => {
    scripted.hook = claudeStream(300); // message_start, then pings for ever
    const t0 = Date.now();
    const { res, text } = await timedBody(`${g.baseURL}beta/models/test/scripted:streamGenerateContent?alt=sse`, { contents: [{ role: "user", parts: [{ text: "hi" }] }] }, { "x-goog-api-key": KEY }, 10_000);
    expect(Date.now() - t0).toBeLessThan(6000);
    expect(res?.status).toBe(504);
    expect(text).toContain("UPSTREAM_TIMEOUT");
  });

  it("a Messages client gets message_start after the hold, then the stream ends with an error event at the deadline", async () => {
    scripted.hook = claudeStream(300);
    const t0 = Date.now();
    const { res, pieces, text } = await timedBody(`${g.baseURL}/messages`, { model: "test/scripted", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] }, { "x-api-key": KEY, "anthropic-version": "2023-06-01" }, 10_000);
    expect(Date.now() - t0).toBeLessThan(6000);
    expect(res?.status).toBe(200);
    expect(pieces[0]!.text).toContain("message_start");
    expect(text).toContain("event: error");
  });
});
