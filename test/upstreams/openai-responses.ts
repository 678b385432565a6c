// A fake OpenAI Responses API (POST /v1/responses, GET/DELETE /v1/responses/{id}, GET …/input_items) on the fake
// OpenAI upstream (openai.ts), behaving like the real one (reference protocols-2 §1): JSON response objects with
// every field echoed, streams of named events (`event: <type>` + `data: {"type":<type>,"sequence_number":n,…}`,
// no [DONE]) in the real order with item_id / output_index / content_index, function_call items with call_id,
// reasoning items (encrypted_content when `include` asks), a web_search_call for the web_search tool, usage with
// cached and reasoning details, OpenAI's error bodies, and its own stored responses so a passed-through
// previous_response_id works (404 previous_response_not_found otherwise). POST /v1/responses/input_tokens counts a
// request as a create with the same fields reports its usage.input_tokens, after the same checks (its own parameter
// list). Requests are recorded on the fake (`requests`); `failures` apply to /responses requests as to chat ones.
import type { ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import { startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions, type RecordedRequest } from "./openai.ts";
import { sampleFor, toolInput } from "./schema-sample.ts";
import { conversationError, COUNT_PARAMS, modelParamsError, paramsError, type ResponsesRequestError } from "./openai-responses-checks.ts";
import { conversationText, type AgentScript } from "./scripted-agent.ts";

export const RESPONSES_TEXT = "Hello from the fake Responses upstream, streaming word by word.";
const KEY = "Bearer sk-fake-upstream";

export interface StoredResponse {
  response: any;
  /** The request's input items, with ids (GET …/input_items). */
  input: any[];
  /** Everything the next turn continues from: the history, this input, this output. */
  conversation: any[];
}

export interface FakeResponses {
  /** Responses the fake holds (store not false), by id. */
  stored: Map<string, StoredResponse>;
  /** input_tokens_details.cached_tokens of the next answers (capped at input_tokens). */
  cachedTokens: number;
  /** Milliseconds between stream events (0: the whole stream in one write). */
  eventDelayMs: number;
}

export type FakeOpenAIWithResponses = FakeOpenAI & { responses: FakeResponses };

const hex = (n: number) => randomBytes(n).toString("hex");
const words = (text: string): string[] => text.match(/\s*\S+/g) ?? [];

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", "x-request-id": `req_${hex(8)}`, "openai-processing-ms": "9", ...headers });
  res.end(JSON.stringify(body));
}

const errorBody = (e: Pick<ResponsesRequestError, "message" | "param" | "code">, type = "invalid_request_error") => ({ error: { message: e.message, type, param: e.param, code: e.code } });

/** A string input is one user message; an item without a type with a role is a message. */
function inputItems(input: unknown): any[] {
  if (input === undefined || input === null) return [];
  if (typeof input === "string") return [{ type: "message", role: "user", content: [{ type: "input_text", text: input }] }];
  return (input as any[]).map((it) => (it?.type === undefined && it?.role ? { type: "message", ...it } : it));
}

const withId = (it: any) => (it.id ? it : { ...it, id: `${it.type === "message" ? "msg" : it.type === "function_call_output" ? "fco" : "item"}_${hex(24)}` });

/** The latest user text (what a web search would look up). */
function lastUserText(items: any[]): string {
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i];
    if (it.type === "message" && it.role === "user") return typeof it.content === "string" ? it.content : it.content.map((p: any) => p.text ?? "").join(" ");
  }
  return "";
}

/** Tool results came in after the last user message: the model answers instead of calling again. */
function toolsAnswered(items: any[]): boolean {
  for (let i = items.length - 1; i >= 0; i--) {
    if (items[i].type === "function_call_output" || items[i].type === "custom_tool_call_output") return true;
    if (items[i].type === "message" && items[i].role === "user") return false;
  }
  return false;
}

const encrypted = (model: string) => Buffer.from(JSON.stringify({ fake: "openai-responses", model, n: hex(8) })).toString("base64");
const verifyEncrypted = (s: string) => {
  try {
    return JSON.parse(Buffer.from(s, "base64").toString("utf8")).fake === "openai-responses";
  } catch {
    return false;
  }
};

/** The input tokens of a request over `conversation`: what a create reports and the count answers. */
function inputTokensOf(body: any, conversation: any[]): number {
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  return Math.max(1, JSON.stringify([body.instructions ?? null, tools, conversation]).length >> 2);
}

interface Answer {
  output: any[];
  /** Text pieces per output index (message text, reasoning summary, function arguments), for the stream. */
  pieces: Map<number, string[]>;
  status: "completed" | "incomplete";
  usage: any;
}

function answer(body: any, conversation: any[], cachedTokens: number, script?: AgentScript): Answer {
  const output: any[] = [];
  const pieces = new Map<number, string[]>();
  const include: string[] = Array.isArray(body.include) ? body.include : [];
  const effort = body.reasoning?.effort;
  const reasoning = (effort && effort !== "none") || /^(o\d|gpt-5)/.test(body.model);
  let reasoningTokens = 0;
  if (reasoning) {
    const text = "**Thinking** about the request before answering.";
    reasoningTokens = 16;
    output.push({
      id: `rs_${hex(24)}`, type: "reasoning",
      summary: body.reasoning?.summary ? [{ type: "summary_text", text }] : [],
      ...(include.includes("reasoning.encrypted_content") ? { encrypted_content: encrypted(body.model) } : {}),
    });
    pieces.set(0, words(text));
  }
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  const functions = tools.filter((t) => t.type === "function");
  const choice = body.tool_choice;
  let wanted: any[] = [];
  if (functions.length && choice !== "none" && !toolsAnswered(conversation)) {
    wanted = typeof choice === "object" && choice?.type === "function" ? functions.filter((t) => t.name === choice.name) : functions.slice(0, body.parallel_tool_calls === false ? 1 : 2);
  }
  const offered = tools.filter((t) => t.type === "function" || t.type === "custom").map((t) => ({ name: t.name, schema: t.type === "function" ? t.parameters ?? {} : undefined }));
  const scripted = script?.({ tools: offered, text: conversationText(conversation.filter((it) => it.type === "message")), answered: toolsAnswered(conversation) });
  if (scripted) wanted = [];
  let outputTokens = reasoningTokens;
  if (scripted && "call" in scripted) {
    const { name, input } = scripted.call;
    const call_id = `call_${hex(12)}`;
    const item = typeof input === "string"
      ? { id: `ctc_${hex(24)}`, type: "custom_tool_call", status: "completed", call_id, name, input }
      : { id: `fc_${hex(24)}`, type: "function_call", status: "completed", arguments: JSON.stringify(input), call_id, name };
    pieces.set(output.length, (typeof input === "string" ? input : item.arguments!).match(/[\s\S]{1,5}/g) ?? []);
    output.push(item);
    outputTokens += 8;
  }
  wanted.forEach((t, i) => {
    const base = t.parameters?.properties?.city ? { city: i === 0 ? "Paris" : "Tokyo" } : {};
    const args = JSON.stringify(toolInput(t.parameters ?? {}, base));
    pieces.set(output.length, args.match(/[\s\S]{1,5}/g) ?? []);
    output.push({ id: `fc_${hex(24)}`, type: "function_call", status: "completed", arguments: args, call_id: `call_${hex(12)}`, name: t.name });
    outputTokens += Math.max(1, args.length >> 2);
  });
  let status: Answer["status"] = "completed";
  if (scripted && "text" in scripted) {
    pieces.set(output.length, words(scripted.text));
    output.push({ id: `msg_${hex(24)}`, type: "message", status, role: "assistant", content: [{ type: "output_text", text: scripted.text, annotations: [], logprobs: [] }] });
    outputTokens += words(scripted.text).length;
  } else if (!scripted && !wanted.length) {
    const search = tools.find((t) => String(t.type).startsWith("web_search"));
    if (search) {
      // One search, or `[searches:N]` in the question; max_tool_calls caps built-in tool calls, as OpenAI does.
      const query = lastUserText(conversation);
      const asked = Number(/\[searches:(\d+)\]/.exec(query)?.[1] ?? 1);
      const n = typeof body.max_tool_calls === "number" ? Math.min(asked, body.max_tool_calls) : asked;
      for (let i = 0; i < n; i++) output.push({ id: `ws_${hex(24)}`, type: "web_search_call", status: "completed", action: { type: "search", query } });
    }
    const format = body.text?.format;
    const text = format?.type === "json_schema" ? JSON.stringify(sampleFor(format.schema ?? { type: "object" }))
      : format?.type === "json_object" ? JSON.stringify({ answer: "sample" })
      : search ? `${RESPONSES_TEXT} (searched the web)` : RESPONSES_TEXT;
    let ws = words(text);
    // max_output_tokens counts reasoning tokens too.
    const budget = typeof body.max_output_tokens === "number" ? body.max_output_tokens - reasoningTokens : Infinity;
    if (ws.length > budget) {
      ws = ws.slice(0, Math.max(0, budget));
      status = "incomplete";
    }
    pieces.set(output.length, ws);
    output.push({
      id: `msg_${hex(24)}`, type: "message", status, role: "assistant",
      content: [{ type: "output_text", text: ws.join(""), annotations: [], logprobs: [] }],
    });
    outputTokens += ws.length;
  }
  const input = inputTokensOf(body, conversation);
  const cached = Math.min(cachedTokens, input);
  return {
    output, pieces, status,
    usage: {
      input_tokens: input, input_tokens_details: { cached_tokens: cached, cache_write_tokens: 0 },
      output_tokens: outputTokens, output_tokens_details: { reasoning_tokens: reasoningTokens },
      total_tokens: input + outputTokens,
    },
  };
}

/** The response object as the API returns it: request settings echoed with their effective values. */
function responseObject(id: string, body: any, extra: Record<string, unknown>): any {
  return {
    id, object: "response", created_at: Math.floor(Date.now() / 1000), status: "completed", background: body.background ?? false,
    error: null, incomplete_details: null, instructions: body.instructions ?? null, max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null, model: `${body.model}-2025-08-07`, output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true, previous_response_id: body.previous_response_id ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null, reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    safety_identifier: body.safety_identifier ?? null, service_tier: body.service_tier ?? "default", store: body.store ?? true,
    temperature: body.temperature ?? 1, text: { format: body.text?.format ?? { type: "text" }, verbosity: body.text?.verbosity ?? "medium" },
    tool_choice: body.tool_choice ?? "auto", tools: body.tools ?? [], top_logprobs: body.top_logprobs ?? 0, top_p: body.top_p ?? 1,
    truncation: body.truncation ?? "disabled", usage: null, user: body.user ?? null, metadata: body.metadata ?? {},
    ...extra,
  };
}

/** The stream's events in the real order, as SSE frames. */
function streamFrames(id: string, body: any, a: Answer, final: any): string[] {
  const frames: string[] = [];
  let seq = 0;
  const obfuscate = body.stream_options?.include_obfuscation !== false;
  const emit = (type: string, payload: Record<string, unknown>) =>
    frames.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...payload })}\n\n`);
  const delta = (type: string, payload: Record<string, unknown>) => emit(type, obfuscate ? { ...payload, obfuscation: hex(3) } : payload);
  const start = responseObject(id, body, { status: "in_progress", created_at: final.created_at });
  emit("response.created", { response: start });
  emit("response.in_progress", { response: start });
  a.output.forEach((item, output_index) => {
    const ps = a.pieces.get(output_index) ?? [];
    const item_id = item.id;
    if (item.type === "reasoning") {
      emit("response.output_item.added", { output_index, item: { id: item_id, type: "reasoning", summary: [] } });
      item.summary.forEach((part: any, summary_index: number) => {
        emit("response.reasoning_summary_part.added", { item_id, output_index, summary_index, part: { type: "summary_text", text: "" } });
        for (const p of ps) delta("response.reasoning_summary_text.delta", { item_id, output_index, summary_index, delta: p });
        emit("response.reasoning_summary_text.done", { item_id, output_index, summary_index, text: part.text });
        emit("response.reasoning_summary_part.done", { item_id, output_index, summary_index, part });
      });
    } else if (item.type === "message") {
      const part = item.content[0];
      emit("response.output_item.added", { output_index, item: { id: item_id, type: "message", status: "in_progress", role: "assistant", content: [] } });
      emit("response.content_part.added", { item_id, output_index, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
      for (const p of ps) delta("response.output_text.delta", { item_id, output_index, content_index: 0, delta: p, logprobs: [] });
      emit("response.output_text.done", { item_id, output_index, content_index: 0, text: part.text, logprobs: [] });
      emit("response.content_part.done", { item_id, output_index, content_index: 0, part });
    } else if (item.type === "function_call") {
      emit("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } });
      for (const p of ps) delta("response.function_call_arguments.delta", { item_id, output_index, delta: p });
      emit("response.function_call_arguments.done", { item_id, output_index, arguments: item.arguments, name: item.name });
    } else if (item.type === "web_search_call") {
      emit("response.output_item.added", { output_index, item: { ...item, status: "in_progress" } });
      for (const s of ["in_progress", "searching", "completed"]) emit(`response.web_search_call.${s}`, { item_id, output_index });
    }
    emit("response.output_item.done", { output_index, item });
  });
  emit(final.status === "incomplete" ? "response.incomplete" : "response.completed", { response: final });
  return frames;
}

/** Serve /v1/responses on `fake` (the chat completions API stays as it is). */
export function serveResponses(fake: FakeOpenAI, opts: { eventDelayMs?: number } = {}): FakeResponses {
  const state: FakeResponses = { stored: new Map(), cachedTokens: 0, eventDelayMs: opts.eventDelayMs ?? 0 };
  const held = () => {
    const ids = new Set<string>();
    for (const s of state.stored.values()) for (const it of s.conversation) if (it.id) ids.add(it.id);
    return ids;
  };
  const findItem = (id: string) => {
    for (const s of state.stored.values()) for (const it of s.conversation) if (it.id === id) return it;
    return undefined;
  };

  async function handle(rec: RecordedRequest, res: ServerResponse): Promise<void> {
    const failure = fake.failures.shift();
    if (failure?.kind === "hang") return;
    if (failure?.kind === "reset") {
      res.socket?.destroy();
      return;
    }
    if (failure?.kind === "status") {
      const type = failure.status === 429 ? "rate_limit_exceeded" : failure.status >= 500 ? "server_error" : "invalid_request_error";
      send(res, failure.status, failure.body ?? errorBody({ message: `fake upstream failure ${failure.status}`, param: null, code: failure.status === 429 ? "rate_limit_exceeded" : null }, type), failure.headers);
      return;
    }
    if (rec.headers.authorization !== KEY) {
      send(res, 401, errorBody({ message: "Incorrect API key provided.", param: null, code: "invalid_api_key" }));
      return;
    }
    const path = rec.path.split("?")[0]!;
    const counting = path === "/v1/responses/input_tokens" && rec.method === "POST";
    const m = counting ? ["", undefined] : /^\/v1\/responses(?:\/([^/]+)(\/input_items)?)?$/.exec(path);
    if (!m || (m[1] === undefined && rec.method !== "POST") || (m[1] !== undefined && rec.method === "POST")) {
      send(res, 404, errorBody({ message: `Invalid URL (${rec.method} ${rec.path})`, param: null, code: "unknown_url" }));
      return;
    }
    if (m[1] !== undefined) {
      const s = state.stored.get(m[1]);
      if (!s) {
        send(res, 404, errorBody({ message: `Response with id '${m[1]}' not found.`, param: null, code: null }));
      } else if (m[2]) {
        const data = [...s.input].reverse();
        send(res, 200, { object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false });
      } else if (rec.method === "DELETE") {
        state.stored.delete(m[1]);
        send(res, 200, { id: m[1], object: "response", deleted: true });
      } else {
        send(res, 200, s.response);
      }
      return;
    }

    const body = rec.body;
    const invalid = paramsError(body, counting ? COUNT_PARAMS : undefined) ?? modelParamsError(body);
    if (invalid) return send(res, invalid.status, errorBody(invalid));
    let history: any[] = [];
    if (typeof body.previous_response_id === "string") {
      const prev = state.stored.get(body.previous_response_id);
      if (!prev) {
        return send(res, 404, errorBody({ message: `Previous response with id '${body.previous_response_id}' not found.`, param: "previous_response_id", code: "previous_response_not_found" }));
      }
      history = prev.conversation;
    }
    const input: any[] = [];
    for (const it of inputItems(body.input)) {
      if (it?.type !== "item_reference") {
        input.push(withId(it));
        continue;
      }
      const found = findItem(it.id);
      if (!found) return send(res, 404, errorBody({ message: `Item with id '${it.id}' not found.`, param: "input", code: null }));
      input.push(found);
    }
    const conversation = [...history, ...input];
    const convError = conversationError(conversation, held(), verifyEncrypted);
    if (convError) return send(res, convError.status, errorBody(convError));

    if (counting) return send(res, 200, { object: "response.input_tokens", input_tokens: inputTokensOf(body, conversation) });

    const id = `resp_${hex(24)}`;
    const a = answer(body, conversation, state.cachedTokens, fake.script);
    const final = responseObject(id, body, {
      status: a.status, output: a.output, usage: a.usage,
      incomplete_details: a.status === "incomplete" ? { reason: "max_output_tokens" } : null,
    });
    if (body.store !== false) state.stored.set(id, { response: final, input, conversation: [...conversation, ...a.output] });
    if (body.stream !== true) return send(res, 200, final);

    const frames = streamFrames(id, body, a, final);
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive", "x-request-id": `req_${hex(8)}` });
    const dieAfter = failure?.kind === "die-mid-stream" ? failure.afterChunks : Infinity;
    const delay = failure?.kind === "slow" ? failure.chunkDelayMs : failure?.kind === "die-mid-stream" ? 15 : state.eventDelayMs;
    if (!delay) {
      res.end(frames.join(""));
      return;
    }
    for (let i = 0; i < frames.length; i++) {
      if (i >= dieAfter) {
        res.socket?.destroy();
        return;
      }
      if (res.destroyed) return;
      res.write(frames[i]);
      await new Promise((r) => setTimeout(r, delay));
    }
    res.end();
  }

  const previous = fake.hook;
  fake.hook = (rec, res) => {
    if (previous?.(rec, res)) return true;
    if (!rec.path.startsWith("/v1/responses")) return false;
    handle(rec, res).catch((err) => {
      if (!res.headersSent) send(res, 500, errorBody({ message: String(err), param: null, code: "server_error" }, "server_error"));
      else res.destroy(err as Error);
    });
    return true;
  };
  return state;
}

/** The fake OpenAI upstream serving both /chat/completions and /responses. */
export async function startFakeOpenAIResponses(opts: FakeOpenAIOptions & { eventDelayMs?: number } = {}): Promise<FakeOpenAIWithResponses> {
  const fake = await startFakeOpenAI(opts);
  return Object.assign(fake, { responses: serveResponses(fake, opts) });
}
