// An upstream that opens a stream with 200 and then, before any content, says the request is wrong (Anthropic's
// `event: error` invalid_request_error "prompt is too long", Gemini's INVALID_ARGUMENT, an OpenAI chat error chunk,
// Bedrock's validationException frame, a Responses context_length_exceeded) refuses it as its HTTP 400 would: one
// upstream call, no other endpoint asked, the client's own 400 with x-should-retry: false (docs/routing.md "Upstream
// errors"). Before, each was retried and fallen back on, and reached the client as a retryable 502, so the SDKs sent
// it again: up to 6 calls for a prompt that cannot pass. And a native Responses stream that fails after its output
// (relayed as it came) is recorded as what it was, stream_error, as every translated stream is. On the shipped
// gateway.yaml (SQLite, the default pipeline, a key with a budget and rate limits).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { ledgerRecordOf, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, providerEnv, shippedConfig } from "./helpers/shipped-config.ts";
import { listenLoopback, readRequest, type Loopback } from "./upstreams/http-fake.ts";
import { eventFrame, exceptionFrame } from "./upstreams/bedrock.ts";

const PROMPT_TOO_LONG = "prompt is too long: 210000 tokens > 200000 maximum";
/** Bedrock's modelStreamErrorException passing on the model's own 400, as its HTTP ModelErrorException does. */
const modelRefused = () => exceptionFrame("modelStreamErrorException", { message: 'Received client error (400) from primary with message "input malformed"', originalStatusCode: 400, originalMessage: "input malformed" });
const pricing = { input: "0.000001", output: "0.000002" };

/** Each refusing endpoint's model has a second endpoint that would answer: it must not be asked. */
const twoEndpoints = (first: Record<string, unknown>) => ({
  type: "language", context_window: 200_000, max_tokens: 1000,
  endpoints: [{ ...first, pricing }, { provider: "spare", model: "spare-x", pricing }],
});

let fake: Loopback;
let gw: TestGateway;
/** Upstream calls, by path. */
const calls: string[] = [];

const sse = (res: ServerResponse) => res.writeHead(200, { "content-type": "text/event-stream" });
const data = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const named = (o: Record<string, unknown>) => `event: ${o.type}\ndata: ${JSON.stringify(o)}\n\n`;
const chunk = (delta: unknown, finish: string | null = null) => ({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] });
const response = (status: string, extra: Record<string, unknown> = {}) => ({ id: "resp_1", object: "response", created_at: 1, status, model: "gpt-x", output: [], usage: null, ...extra });

/**
 * Each upstream's answer that begins ("Hel") and then fails in-band: for "request", with its error about the client's
 * own request (OpenAI's context_length_exceeded chunk, Anthropic's invalid_request_error, Gemini's INVALID_ARGUMENT,
 * a Responses invalid_prompt, Bedrock's modelStreamErrorException passing on the model's 400); for "server", with its
 * server error.
 */
function afterOutput(path: string, kind: "request" | "server", res: ServerResponse) {
  if (path.startsWith("/bedrock/")) {
    res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
    return res.end(Buffer.concat([eventFrame("messageStart", { role: "assistant" }), eventFrame("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Hel" } }), modelRefused()]));
  }
  sse(res);
  if (path === "/openai/v1/chat/completions") {
    const error = kind === "request"
      ? { message: "This model's maximum context length is 128000 tokens.", type: "invalid_request_error", code: "context_length_exceeded", param: "messages" }
      : { message: "The server had an error while processing your request.", type: "server_error", code: null, param: null };
    return res.end(data(chunk({ role: "assistant", content: "Hel" })) + data({ error }));
  }
  if (path === "/anthropic/v1/messages") {
    const start = { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } };
    return res.end(named(start) + named({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })
      + named({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } })
      + named({ type: "error", error: { type: "invalid_request_error", message: PROMPT_TOO_LONG } }));
  }
  if (path.startsWith("/gemini/")) {
    const candidate = { candidates: [{ content: { role: "model", parts: [{ text: "Hel" }] }, index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 1, totalTokenCount: 11 } };
    return res.end(data(candidate) + data({ error: { code: 400, message: "Request contains an invalid argument.", status: "INVALID_ARGUMENT" } }));
  }
  let seq = 0;
  const ev = (o: Record<string, unknown>) => named({ ...o, sequence_number: seq++ });
  const item = { type: "message", id: "msg_1", status: "in_progress", role: "assistant", content: [] };
  return res.end(ev({ type: "response.created", response: response("in_progress") }) + ev({ type: "response.in_progress", response: response("in_progress") })
    + ev({ type: "response.output_item.added", output_index: 0, item })
    + ev({ type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hel" })
    + ev({ type: "error", code: "invalid_prompt", message: "Invalid prompt: flagged as potentially violating our usage policy.", param: null })
    + ev({ type: "response.failed", response: response("failed", { output: [item], error: { code: "invalid_prompt", message: "Invalid prompt" }, usage: { input_tokens: 10, output_tokens: 1, total_tokens: 11 } }) }));
}

beforeAll(async () => {
  fake = await listenLoopback(async (req, res) => {
    const r = await readRequest(req);
    calls.push(r.path);
    if (r.path.startsWith("/spare/")) { // a chat upstream that answers
      sse(res);
      return res.end(data(chunk({ role: "assistant", content: "fine" })) + data(chunk({}, "stop")) + "data: [DONE]\n\n");
    }
    const asked = JSON.stringify(r.body);
    if (asked.includes("refused after output") || asked.includes("broken after output")) return afterOutput(r.path, asked.includes("refused") ? "request" : "server", res);
    if (r.path === "/openai/v1/chat/completions") {
      sse(res);
      return res.end(data(chunk({ role: "assistant", content: "" })) + data({ error: { message: "Invalid 'messages[0].content': string too long.", type: "invalid_request_error", code: "string_above_max_length", param: "messages[0].content" } }));
    }
    if (r.path === "/openai/v1/responses") {
      sse(res);
      let seq = 0;
      const ev = (o: Record<string, unknown>) => named({ ...o, sequence_number: seq++ });
      const opening = ev({ type: "response.created", response: response("in_progress") }) + ev({ type: "response.in_progress", response: response("in_progress") });
      if (JSON.stringify(r.body).includes("fail big after output")) { // output the gateway's estimate counts high
        const item = { type: "message", id: "msg_1", status: "in_progress", role: "assistant", content: [] };
        return res.end(opening + ev({ type: "response.output_item.added", output_index: 0, item })
          + ev({ type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: '{"a":[1,2,3],"b":{"c":"d"}},'.repeat(40) })
          + ev({ type: "response.failed", response: response("failed", { output: [item], error: { code: "server_error", message: "The server had an error" }, usage: { input_tokens: 10, output_tokens: 601, total_tokens: 611 } }) }));
      }
      if (JSON.stringify(r.body).includes("reset after output")) { // a proxy's error event, its data not JSON
        const item = { type: "message", id: "msg_1", status: "in_progress", role: "assistant", content: [] };
        return res.end(opening + ev({ type: "response.output_item.added", output_index: 0, item })
          + ev({ type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hel" })
          + "event: error\ndata: upstream reset\n\n");
      }
      if (JSON.stringify(r.body).includes("error without terminal after output")) {
        const item = { type: "message", id: "msg_1", status: "in_progress", role: "assistant", content: [] };
        return res.end(opening + ev({ type: "response.output_item.added", output_index: 0, item })
          + ev({ type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hello there" })
          + ev({ type: "error", code: "server_error", message: "The server had an error", param: null }));
      }
      if (JSON.stringify(r.body).includes("fail after output")) {
        const item = { type: "message", id: "msg_1", status: "in_progress", role: "assistant", content: [] };
        return res.end(opening + ev({ type: "response.output_item.added", output_index: 0, item })
          + ev({ type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hel" })
          + ev({ type: "error", code: "server_error", message: "The server had an error", param: null })
          + ev({ type: "response.failed", response: response("failed", { output: [item], error: { code: "server_error", message: "The server had an error" }, usage: { input_tokens: 10, output_tokens: 1, total_tokens: 11 } }) }));
      }
      const message = "Your input exceeds the context window of this model.";
      return res.end(opening + ev({ type: "error", code: "context_length_exceeded", message, param: "input" })
        + ev({ type: "response.failed", response: response("failed", { error: { code: "context_length_exceeded", message } }) }));
    }
    if (r.path === "/anthropic/v1/messages") {
      sse(res);
      const start = { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } };
      return res.end(named(start) + named({ type: "error", error: { type: "invalid_request_error", message: PROMPT_TOO_LONG } }));
    }
    if (r.path.startsWith("/gemini/") && r.path.includes(":streamGenerateContent")) {
      sse(res);
      return res.end(`data: ${JSON.stringify({ error: { code: 400, message: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", status: "INVALID_ARGUMENT" } })}\r\n\r\n`);
    }
    if (r.path.startsWith("/bedrock/") && r.path.endsWith("/converse-stream")) {
      res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
      if (asked.includes("model refused")) return res.end(Buffer.concat([eventFrame("messageStart", { role: "assistant" }), modelRefused()]));
      return res.end(Buffer.concat([eventFrame("messageStart", { role: "assistant" }), exceptionFrame("validationException", { message: "Input is too long for requested model." })]));
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `no ${r.path}` } }));
  });
  const config = shippedConfig({ openai: `${fake.origin}/openai/v1`, anthropic: `${fake.origin}/anthropic` });
  config.providers.gemini.base_url = `${fake.origin}/gemini`;
  config.providers.bedrock = { protocol: "bedrock", region: "us-east-1", base_url: `${fake.origin}/bedrock`, api_key: "bedrock-fake-key" };
  config.providers.spare = { protocol: "openai", base_url: `${fake.origin}/spare/v1`, api_key: "sk-spare" };
  config.models["t/openai"] = twoEndpoints({ provider: "openai", model: "gpt-x" });
  config.models["t/responses"] = twoEndpoints({ provider: "openai", model: "gpt-x", native_responses: true });
  config.models["t/anthropic"] = twoEndpoints({ provider: "anthropic", model: "claude-x" });
  config.models["t/gemini"] = twoEndpoints({ provider: "gemini", model: "gemini-x" });
  config.models["t/bedrock"] = twoEndpoints({ provider: "bedrock", model: "meta.llama3-3-70b-instruct-v1:0" });
  // Models of their own for the requests that fail after output: their circuits are apart from the others'.
  config.models["t/openai-after"] = twoEndpoints({ provider: "openai", model: "gpt-x" });
  config.models["t/responses-after"] = twoEndpoints({ provider: "openai", model: "gpt-x", native_responses: true });
  config.models["t/anthropic-after"] = twoEndpoints({ provider: "anthropic", model: "claude-x" });
  config.models["t/gemini-after"] = twoEndpoints({ provider: "gemini", model: "gemini-x" });
  config.models["t/bedrock-after"] = twoEndpoints({ provider: "bedrock", model: "meta.llama3-3-70b-instruct-v1:0" });
  config.models["t/openai-broken"] = twoEndpoints({ provider: "openai", model: "gpt-x" });
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: "AIza-fake" } });
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

beforeEach(() => {
  calls.length = 0;
});

const post = (path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${SHIPPED_KEY}` }) =>
  fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const chat = (model: string, content = "a very long prompt") => post("/api/v1/chat/completions", { model, stream: true, messages: [{ role: "user", content }] });

describe("an in-band error about the request, before any content", () => {
  // A context overflow is told in OpenAI's code, context_length_exceeded, the gateway's in details.gateway_code.
  for (const [model, upstream, says, code] of [
    ["t/openai", "/openai/v1/chat/completions", "string too long", "INVALID_REQUEST"],
    ["t/anthropic", "/anthropic/v1/messages", "prompt is too long", "context_length_exceeded"],
    ["t/gemini", "/gemini/v1beta/models/gemini-x:streamGenerateContent?alt=sse", "input token count", "context_length_exceeded"],
    ["t/bedrock", "/bedrock/model/meta.llama3-3-70b-instruct-v1%3A0/converse-stream", "Input is too long", "context_length_exceeded"],
  ] as const) {
    it(`${model} (a chat client): one upstream call, no fallback, the client's 400 ${code} with x-should-retry: false`, async () => {
      const res = await chat(model);
      const body = await res.json();
      expect(calls).toEqual([upstream]);
      expect(res.status).toBe(400);
      expect(res.headers.get("x-should-retry")).toBe("false");
      expect(body.error).toMatchObject({ code, type: "invalid_request_error", message: expect.stringContaining(says) });
      if (code !== "INVALID_REQUEST") expect(body.error.details.gateway_code).toBe("INVALID_REQUEST");
      expect((await ledgerRecordOf(gw, res.headers.get("x-request-id"))).outcome).toBe("error");
    });
  }

  it("t/bedrock whose model refused the request (modelStreamErrorException, originalStatusCode 400): one call, the client's 400", async () => {
    const res = await chat("t/bedrock", "model refused");
    const body = await res.json();
    expect(calls).toEqual(["/bedrock/model/meta.llama3-3-70b-instruct-v1%3A0/converse-stream"]);
    expect(res.status).toBe(400);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(body.error).toMatchObject({ code: "INVALID_REQUEST", type: "invalid_request_error", message: expect.stringContaining("input malformed") });
  });

  it("a Messages client on Claude gets Anthropic's own 400 invalid_request_error, once", async () => {
    const res = await post("/api/v1/messages", { model: "t/anthropic", max_tokens: 100, stream: true, messages: [{ role: "user", content: "long" }] }, { "x-api-key": SHIPPED_KEY, "anthropic-version": "2023-06-01" });
    const body = await res.json();
    expect(calls).toEqual(["/anthropic/v1/messages"]);
    expect(res.status).toBe(400);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error", message: expect.stringContaining(PROMPT_TOO_LONG) } });
  });

  it("a Gemini client on Gemini gets Google's 400 INVALID_ARGUMENT (not a retryable 502 UNAVAILABLE), once", async () => {
    const res = await post("/api/v1beta/models/t/gemini:streamGenerateContent?alt=sse", { contents: [{ role: "user", parts: [{ text: "long" }] }] }, { "x-goog-api-key": SHIPPED_KEY });
    const body = await res.json();
    expect(calls).toHaveLength(1);
    expect(res.status).toBe(400);
    expect(body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT", message: expect.stringContaining("input token count") });
  });

  it("a Responses client on a native Responses model (context_length_exceeded): one call, the 400 naming the field", async () => {
    const res = await post("/api/v1/responses", { model: "t/responses", stream: true, input: "long" });
    const body = await res.json();
    expect(calls).toEqual(["/openai/v1/responses"]);
    expect(res.status).toBe(400);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(body.error).toMatchObject({ code: "context_length_exceeded", param: "input", message: expect.stringContaining("exceeds the context window"), details: { gateway_code: "INVALID_REQUEST" } });
  });
});

describe("a native Responses stream that fails after its output", () => {
  it("is relayed as the upstream sent it (no second error of the gateway's) and recorded as stream_error", async () => {
    const res = await post("/api/v1/responses", { model: "t/responses", stream: true, input: "fail after output" });
    const text = await res.text();
    expect(res.status).toBe(200);
    const types = [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(types).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.output_text.delta", "error", "response.failed"]);
    const record = await ledgerRecordOf(gw, res.headers.get("x-request-id"));
    expect(record.outcome).toBe("stream_error");
    expect(calls).toEqual(["/openai/v1/responses"]);
  });

  it("whose response.failed reports its usage is billed that usage, as reported (not the gateway's estimate)", async () => {
    const res = await post("/api/v1/responses", { model: "t/responses", stream: true, input: "fail big after output" });
    expect(await res.text()).toContain('"output_tokens":601');
    const record = await ledgerRecordOf(gw, res.headers.get("x-request-id"));
    expect(record).toMatchObject({ outcome: "stream_error", inputTokens: 10, outputTokens: 601, estimated: false });
  });

  it("whose error event is not JSON (a proxy's `upstream reset`) is not relayed (the openai SDK would throw a bare SyntaxError on it): the gateway ends the stream in the upstream's words, numbered on", async () => {
    const res = await post("/api/v1/responses", { model: "t/responses", stream: true, input: "reset after output" });
    const text = await res.text();
    expect(text).not.toContain("data: upstream reset");
    expect(text).not.toContain("Could not reach");
    const events = [...text.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1]!));
    expect(events.map((e) => [e.type, e.sequence_number])).toEqual([["response.created", 0], ["response.in_progress", 1], ["response.output_item.added", 2], ["response.output_text.delta", 3], ["response.failed", 4], ["error", 5]]);
    expect(events.at(-1)).toMatchObject({ code: "UPSTREAM_ERROR", message: "Provider openai failed mid-stream: upstream reset" });
    expect(await ledgerRecordOf(gw, res.headers.get("x-request-id"))).toMatchObject({ outcome: "stream_error", attemptList: [{ status: 502, error: "UPSTREAM_ERROR" }] });
  });

  it("that ends after an error event without response.failed (no usage reported) is billed the estimate", async () => {
    const res = await post("/api/v1/responses", { model: "t/responses", stream: true, input: "error without terminal after output" });
    await res.text();
    const record = await ledgerRecordOf(gw, res.headers.get("x-request-id"));
    expect(record).toMatchObject({ outcome: "stream_error", estimated: true });
    expect(record.outputTokens).toBeGreaterThan(0);
  });
});

describe("an in-band error about the request after output has begun", () => {
  // The circuit opens after 5 failures in a row (routing.circuit_breaker, as shipped): a sixth request shows whether
  // those five were counted against the endpoint.
  const REQUESTS = 6;
  for (const [model, upstream, says, ask] of [
    ["t/openai-after", "/openai/v1/chat/completions", "maximum context length", () => chat("t/openai-after", "refused after output")],
    ["t/anthropic-after", "/anthropic/v1/messages", "prompt is too long", () => chat("t/anthropic-after", "refused after output")],
    ["t/gemini-after", "/gemini/v1beta/models/gemini-x:streamGenerateContent?alt=sse", "invalid argument", () => chat("t/gemini-after", "refused after output")],
    ["t/responses-after", "/openai/v1/responses", "Invalid prompt", () => post("/api/v1/responses", { model: "t/responses-after", stream: true, input: "refused after output" })],
    ["t/bedrock-after", "/bedrock/model/meta.llama3-3-70b-instruct-v1%3A0/converse-stream", "input malformed", () => chat("t/bedrock-after", "refused after output")],
  ] as const) {
    it(`${model}: recorded as the client's error, it opens no circuit: every request still reaches the model's endpoint`, async () => {
      for (let i = 0; i < REQUESTS; i++) {
        const res = await ask();
        const text = await res.text();
        expect(res.status).toBe(200);
        expect(text).toContain(says);
        const record = await ledgerRecordOf(gw, res.headers.get("x-request-id"));
        expect(record).toMatchObject({ outcome: "stream_error", attemptList: [{ status: 400, error: "INVALID_REQUEST" }] });
      }
      // Counted as endpoint failures, the sixth would have found the circuit open and gone to the spare endpoint.
      expect(calls).toEqual(Array(REQUESTS).fill(upstream));
    });
  }

  it("a server error after output still counts: the sixth request finds the circuit open and goes to the spare endpoint", async () => {
    for (let i = 0; i < REQUESTS; i++) await (await chat("t/openai-broken", "broken after output")).text();
    expect(calls).toEqual([...Array(REQUESTS - 1).fill("/openai/v1/chat/completions"), "/spare/v1/chat/completions"]);
  });
});
