// A fake OpenAI-protocol upstream that behaves like the real API (reference §1): JSON with
// application/json, SSE `data:` frames with blank-line separators, role on the first chunk, tool-call
// fragments with id/name only on the first fragment, usage chunk only with include_usage, `[DONE]` last,
// and OpenAI's error envelope. Scriptable per test through `fail` and `hook`; `reasoning` makes it a reasoning model
// on an OpenAI-compatible host (openai-reasoning.ts: Groq, DeepSeek, OpenRouter), answering and checking as that host.
import type { IncomingMessage, ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import { alnum, listenLoopback, readRequest } from "./http-fake.ts";
import { limitError, messagesError, responseFormatError, structuredAnswer, toolsAnswered } from "./openai-checks.ts";
import { conversationText, type AgentScript } from "./scripted-agent.ts";
import { askedEffort, effortRefusal, unsupportedEffortError, reasoningDeltas, reasoningError, reasoningFields, type ReasoningHost } from "./openai-reasoning.ts";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: any;
  /** Set when the caller closed the connection before the response was complete. */
  abortedAt?: number;
}

export type Failure =
  | { kind: "status"; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: "hang" }
  | { kind: "reset" }
  | { kind: "die-mid-stream"; afterChunks: number }
  | { kind: "slow"; chunkDelayMs: number };

/**
 * How a stream's frames are written: "burst" = the whole stream (every chunk, the usage chunk and `data: [DONE]`)
 * in one write that also ends the response, as a fast provider's last packet does; "tail" = frames paced by
 * chunkDelayMs (default 5), then the finish chunk, usage chunk and [DONE] together in that final write; a number = that many
 * milliseconds between frames.
 */
export type StreamPace = "burst" | "tail" | number;

export interface FakeOpenAIOptions {
  /** Content returned by the model, split into one chunk per word when streaming. */
  text?: string;
  /** Milliseconds between stream chunks. */
  chunkDelayMs?: number;
  /** Write every stream in one burst (see StreamPace); `pace` on the fake can choose per request. */
  burst?: boolean;
}

export interface FakeOpenAI {
  /** Base URL including /v1, as providers.<name>.base_url expects. */
  baseUrl: string;
  port: number;
  requests: RecordedRequest[];
  /** Failures to apply to the next requests, one per request, in order. */
  failures: Failure[];
  /** Called for every request before the default behaviour; return true when it answered itself. */
  hook?: (req: RecordedRequest, res: ServerResponse) => boolean;
  /** Per-request stream pacing (overrides the options); undefined keeps the options' pacing. */
  pace?: (body: any) => StreamPace | undefined;
  /** Per-request answer text (overrides `text`); undefined keeps it. */
  textFor?: (body: any) => string | undefined;
  /** A scripted model (scripted-agent.ts) that decides the turns it recognises, here and on /responses. */
  script?: AgentScript;
  /** Per-request answer as exact stream chunks (joined for JSON), to cut text where a test wants; undefined keeps textFor/text. */
  piecesFor?: (body: any) => string[] | undefined;
  /** The host whose reasoning models this fake plays (undefined: OpenAI's own chat API, which returns no reasoning). */
  reasoning?: ReasoningHost;
  /** Upstream model ids that reason on their own and refuse reasoning_effort, as xAI's grok-4 does (effortRefusal). */
  effortRefusedBy?: readonly string[];
  /** The model id the answer names for the one asked for (a dated snapshot, as OpenAI names one); undefined: the one asked for. */
  answersAs?: (model: string) => string;
  /** Upstream model ids and the most completion tokens each writes: a larger limit is OpenAI's 400 (limitError). */
  maxCompletionTokens?: Readonly<Record<string, number>>;
  close(): Promise<void>;
}

const DEFAULT_TEXT = "Hello from the fake upstream, streaming word by word.";

function words(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}

function usage(prompt: number, completion: number, reasoning = 0) {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion + reasoning,
    total_tokens: prompt + completion + reasoning,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function promptCount(body: any): number {
  return JSON.stringify(body.messages ?? []).length >> 2;
}

function toolCallsFor(body: any): { id: string; name: string; arguments: string }[] {
  const tools = (body.tools ?? []) as any[];
  if (!tools.length || body.tool_choice === "none") return [];
  if (toolsAnswered(body.messages)) return [];
  const wanted = typeof body.tool_choice === "object" ? [tools.find((t) => t.function.name === body.tool_choice.function.name)] : tools.slice(0, body.parallel_tool_calls === false ? 1 : 2);
  return wanted.filter(Boolean).map((t, i) => ({ id: `call_fake${i}abc`, name: t.function.name, arguments: JSON.stringify({ city: i === 0 ? "Paris" : "Tokyo", unit: "celsius" }) }));
}

export async function startFakeOpenAI(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const text = opts.text ?? DEFAULT_TEXT;
  /** Encrypted reasoning this fake made (a reasoning host that verifies what comes back). */
  const issued = new Set<string>();
  const fake: FakeOpenAI = {
    baseUrl: "",
    port: 0,
    requests: [],
    failures: [],
    close: () => server.close(),
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const rec: RecordedRequest = await readRequest(req);
    const body = rec.body;
    fake.requests.push(rec);
    res.once("close", () => {
      if (!res.writableFinished) rec.abortedAt = Date.now();
    });
    if (fake.hook?.(rec, res)) return;

    const failure = fake.failures.shift();
    if (failure?.kind === "hang") return; // never answers
    if (failure?.kind === "reset") {
      req.socket.destroy();
      return;
    }
    if (failure?.kind === "status") {
      res.writeHead(failure.status, { "content-type": "application/json", "x-request-id": "req_fake_err", ...failure.headers });
      res.end(JSON.stringify(failure.body ?? { error: { message: `fake upstream failure ${failure.status}`, type: failure.status >= 500 ? "server_error" : "invalid_request_error", param: null, code: null } }));
      return;
    }
    if (req.url !== "/v1/chat/completions" || req.method !== "POST") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `Unknown request URL: ${req.method} ${req.url}`, type: "invalid_request_error", param: null, code: "unknown_url" } }));
      return;
    }
    if (req.headers.authorization !== "Bearer sk-fake-upstream") {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "Incorrect API key provided", type: "invalid_request_error", param: null, code: "invalid_api_key" } }));
      return;
    }

    const refused = effortRefusal(body, fake.effortRefusedBy) ?? unsupportedEffortError(body.model, body.reasoning_effort, "reasoning_effort");
    if (refused) {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify(refused));
      return;
    }
    const invalid = limitError(body, fake.maxCompletionTokens?.[body.model]) ?? messagesError(body.messages) ?? responseFormatError(body) ?? (fake.reasoning ? reasoningError(fake.reasoning, body, issued) : undefined);
    if (invalid) {
      res.writeHead(400, { "content-type": "application/json", "x-request-id": "req_fake_400" });
      res.end(JSON.stringify({ error: { message: invalid.message, type: "invalid_request_error", param: invalid.param, code: null } }));
      return;
    }

    // A fresh id per answer, as OpenAI gives: clients that key history or threads by it see distinct turns.
    const id = `chatcmpl-${alnum(29)}`;
    const created = 1770933883;
    const model = fake.answersAs?.(body.model) ?? body.model;
    const offered = (body.tools ?? []).filter((t: any) => t.type === "function").map((t: any) => ({ name: t.function.name, schema: t.function.parameters ?? {} }));
    const scripted = fake.script?.({ tools: offered, text: conversationText(body.messages), answered: toolsAnswered(body.messages) });
    const calls = !scripted ? toolCallsFor(body) : "call" in scripted ? [{ id: `call_${randomBytes(12).toString("hex")}`, name: scripted.call.name, arguments: JSON.stringify(scripted.call.input) }] : [];
    const pieces = calls.length ? [] : fake.piecesFor?.(body) ?? words((scripted && "text" in scripted ? scripted.text : undefined) ?? fake.textFor?.(body) ?? structuredAnswer(body) ?? text);
    const max = body.max_completion_tokens ?? body.max_tokens;
    const cut = typeof max === "number" && pieces.length > max ? pieces.slice(0, max) : pieces;
    const finish = calls.length ? "tool_calls" : cut.length < pieces.length ? "length" : "stop";
    const completion = cut.length + calls.reduce((n, c) => n + (c.arguments.length >> 2), 0);
    const effort = fake.reasoning ? askedEffort(body) : undefined;
    const thought = fake.reasoning && effort ? reasoningFields(fake.reasoning, effort, issued) : undefined;
    const thoughtTokens = thought ? reasoningDeltas(thought).length : 0;
    const headers = { "x-request-id": "req_fake_1", "openai-processing-ms": "12" };

    if (!body.stream) {
      res.writeHead(200, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify({
        id, object: "chat.completion", created, model,
        choices: [{
          index: 0,
          message: { role: "assistant", content: calls.length ? null : cut.join(""), refusal: null, annotations: [], ...thought, ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })) } : {}) },
          logprobs: null,
          finish_reason: finish,
        }],
        usage: usage(promptCount(body), completion, thoughtTokens),
        service_tier: "default",
        system_fingerprint: "fp_fake",
      }));
      return;
    }

    const includeUsage = body.stream_options?.include_usage === true;
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive", ...headers });
    const frames: string[] = [];
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      frames.push(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, service_tier: "default", system_fingerprint: "fp_fake", choices, ...(includeUsage ? { usage: null } : {}), ...extra })}\n\n`);
    chunk([{ index: 0, delta: { role: "assistant", content: calls.length ? null : "", refusal: null }, logprobs: null, finish_reason: null }]);
    for (const d of thought ? reasoningDeltas(thought) : []) chunk([{ index: 0, delta: d, logprobs: null, finish_reason: null }]);
    for (const p of cut) chunk([{ index: 0, delta: { content: p }, logprobs: null, finish_reason: null }]);
    calls.forEach((c, i) => {
      chunk([{ index: 0, delta: { tool_calls: [{ index: i, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }, logprobs: null, finish_reason: null }]);
      for (let k = 0; k < c.arguments.length; k += 5) {
        chunk([{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: c.arguments.slice(k, k + 5) } }] }, logprobs: null, finish_reason: null }]);
      }
    });
    chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finish }]);
    if (includeUsage) chunk([], { usage: usage(promptCount(body), completion, thoughtTokens) });
    frames.push("data: [DONE]\n\n");

    const dieAfter = failure?.kind === "die-mid-stream" ? failure.afterChunks : Infinity;
    const pace = failure ? undefined : fake.pace?.(body) ?? (opts.burst ? "burst" : undefined);
    // The closing frames (finish chunk, usage chunk, [DONE]) that "tail" sends in the final write.
    const tail = pace === "burst" ? frames.length : pace === "tail" ? 2 + (includeUsage ? 1 : 0) : 0;
    const paced = frames.length - tail;
    for (let i = 0; i < paced; i++) {
      if (i >= dieAfter) {
        req.socket.destroy();
        return;
      }
      if (res.destroyed) return;
      res.write(frames[i]);
      // A dying stream is paced so the gateway has relayed the first chunks before the connection drops.
      const delay = failure?.kind === "die-mid-stream" ? 15 : failure?.kind === "slow" ? failure.chunkDelayMs : typeof pace === "number" ? pace : pace === "tail" ? opts.chunkDelayMs ?? 5 : opts.chunkDelayMs;
      if (delay) await new Promise((r) => setTimeout(r, delay));
    }
    if (res.destroyed) return;
    res.end(frames.slice(paced).join(""));
  }

  const server = await listenLoopback((req, res) => void handle(req, res));
  fake.port = server.port;
  fake.baseUrl = `http://127.0.0.1:${fake.port}/v1`;
  return fake;
}
