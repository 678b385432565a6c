// A fake Anthropic Messages upstream, faithful to the reference (§2): x-api-key + anthropic-version required,
// message_start first, a ping, blocks with contiguous indexes (thinking with thinking_delta + signature_delta, text
// with text_delta per word, tool_use with an empty first input_json_delta and small fragments), cumulative
// message_delta usage, message_stop; Anthropic's error envelope; in-band `error` events on request. The web_search
// server tool searches (server_tool_use + web_search_tool_result blocks) up to its max_uses, counted in
// usage.server_tool_use.web_search_requests. Offered json_output beside other tools with tool_choice any (the gateway's
// JSON mode beside tools), it calls the other tools first and answers through json_output after their results.
import type { IncomingMessage, ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import { alnum, listenLoopback, readRequest } from "./http-fake.ts";
import type { RecordedRequest } from "./openai.ts";
import { conversationError, REDACTED_DATA, REDACTED_TRIGGER, signThinking, thinkingOn, toolIdError } from "./anthropic-checks.ts";
import { sampleFor, toolInput } from "./schema-sample.ts";
import { conversationText, type AgentScript } from "./scripted-agent.ts";

export const FAKE_ANTHROPIC_KEY = "sk-ant-fake-upstream";

export type AnthropicFailure =
  | { kind: "status"; status: number; type?: string; message?: string }
  | { kind: "error-event"; afterEvents: number; type?: string }
  | { kind: "die-mid-stream"; afterEvents: number }
  | { kind: "hang" };

export interface FakeAnthropic {
  /** Base URL without /v1 (like https://api.anthropic.com). */
  baseUrl: string;
  requests: RecordedRequest[];
  failures: AnthropicFailure[];
  /** Milliseconds between stream events. */
  eventDelayMs: number;
  /**
   * Per-request stream pacing: "burst" = every event in one write that ends the response (a fast provider's last
   * packet); "tail" = events paced by eventDelayMs (default 5), then message_delta and message_stop in the final
   * write; a number = that many milliseconds between events. Undefined keeps eventDelayMs.
   */
  pace?: (body: any) => "burst" | "tail" | number | undefined;
  /** Per-request answer text of a plain (no tool) reply; undefined keeps the default. */
  textFor?: (body: any) => string | undefined;
  /** Per-request thinking text (with thinking on); undefined keeps the default. */
  thinkingFor?: (body: any) => string | undefined;
  /**
   * Per-request blocks the answer starts with, as they are (a beta's compaction, a type the gateway does not know).
   * Streamed as Anthropic streams them: a compaction opens empty and its content comes in one compaction_delta, any
   * other type comes whole in its content_block_start.
   */
  leadingBlocksFor?: (body: any) => Block[] | undefined;
  /** A scripted model (scripted-agent.ts) that decides the turns it recognises before the default answers. */
  script?: AgentScript;
  /** The model id the answer names for the one asked for (a dated snapshot of an alias); undefined: the one asked for. */
  answersAs?: (model: string) => string;
  /** Set when a streaming response was cut because the gateway closed the connection. */
  aborted: number;
  close(): Promise<void>;
}

const TEXT = "Hello from the fake Anthropic upstream.";
const THOUGHT = "Let me think about this carefully.";
/** The answer after a web search (web_search server tool). */
export const SEARCHED = "According to the search, the gateway shipped.";

function lastUserText(body: any): string {
  const m = (body.messages ?? []).filter((x: any) => x?.role === "user").at(-1);
  if (typeof m?.content === "string") return m.content;
  return (Array.isArray(m?.content) ? m.content : []).filter((b: any) => b.type === "text").map((b: any) => b.text).join(" ");
}

/** The real API's checks on server tools the fake knows. */
function serverToolError(body: any): string | undefined {
  for (const [i, t] of (Array.isArray(body.tools) ? body.tools : []).entries()) {
    if (t?.type !== "web_search_20250305") continue;
    if (t.name !== "web_search") return `tools.${i}.web_search_20250305.name: Input should be 'web_search'`;
    if (t.allowed_domains && t.blocked_domains) return `tools.${i}.web_search_20250305: Cannot specify both allowed_domains and blocked_domains`;
  }
  const names = (body.tools ?? []).map((t: any) => t?.name);
  if (new Set(names).size !== names.length) return "tools: Tool names must be unique.";
  return undefined;
}

const words = (t: string) => t.match(/\s*\S+/g) ?? [];

function hasToolResult(body: any): boolean {
  const last = (body.messages ?? []).filter((m: any) => m?.role !== "system").at(-1);
  return Array.isArray(last?.content) && last.content.some((b: any) => b.type === "tool_result");
}

function errorBody(status: number, type?: string, message?: string) {
  const t = type ?? (status === 429 ? "rate_limit_error" : status === 529 ? "overloaded_error" : status >= 500 ? "api_error" : status === 401 ? "authentication_error" : "invalid_request_error");
  return { type: "error", error: { type: t, message: message ?? `fake anthropic failure ${status}` }, request_id: "req_fake_anthropic" };
}

export interface Block { type: string; [k: string]: any }
/** Block types the fake streams in pieces (any other comes whole in its content_block_start). */
const KNOWN_BLOCKS = new Set(["thinking", "server_tool_use", "text", "tool_use"]);

/** POST /v1/messages/count_tokens: same auth and version rules; max_tokens is refused there, as Anthropic does. */
export const fakeInputTokens = (body: any) => JSON.stringify({ system: body.system, tools: body.tools, messages: body.messages }).length >> 2;
function countTokensAnswer(headers: IncomingMessage["headers"], body: any): [number, unknown] {
  if (headers["x-api-key"] !== FAKE_ANTHROPIC_KEY) return [401, errorBody(401, "authentication_error", "invalid x-api-key")];
  if (!headers["anthropic-version"]) return [400, errorBody(400, "invalid_request_error", "anthropic-version: header is required")];
  if (!body?.model || !Array.isArray(body.messages)) return [400, errorBody(400, "invalid_request_error", "messages: Field required")];
  if (body.max_tokens !== undefined) return [400, errorBody(400, "invalid_request_error", "max_tokens: Extra inputs are not permitted")];
  // The request's shape is checked as a generation's is (tool ids' characters).
  const ids = toolIdError(body.messages);
  if (ids) return [400, errorBody(400, "invalid_request_error", ids)];
  return [200, { input_tokens: fakeInputTokens(body) }];
}

/** Searches a web_search turn runs: `[searches:N]` in the messages (else 2), never more than max_uses. */
function webSearches(body: any): number {
  const tool = (body.tools ?? []).find((t: any) => typeof t.type === "string" && t.type.startsWith("web_search_"));
  if (!tool) return 0;
  const asked = Number(/\[searches:(\d+)\]/.exec(JSON.stringify(body.messages))?.[1] ?? 2);
  return typeof tool.max_uses === "number" ? Math.min(asked, tool.max_uses) : asked;
}

/** The answer the fake gives to a request, as content blocks. */
function plan(body: any, text = TEXT, script?: AgentScript, thinking = THOUGHT): { blocks: Block[]; stop: string; searches: number } {
  const blocks: Block[] = [];
  // A turn whose conversation already holds its searches does not search again.
  const searches = JSON.stringify(body.messages).includes("server_tool_use") ? 0 : webSearches(body);
  for (let i = 0; i < searches; i++) {
    const id = `srvtoolu_fake${i}`;
    blocks.push({ type: "server_tool_use", id, name: "web_search", input: { query: `fake query ${i}` } });
    blocks.push({ type: "web_search_tool_result", tool_use_id: id, content: [{ type: "web_search_result", url: `https://example.com/${i}`, title: `Result ${i}`, encrypted_content: "ZmFrZQ==", page_age: null }] });
  }
  if (thinkingOn(body)) {
    if (JSON.stringify(body.messages).includes(REDACTED_TRIGGER)) blocks.push({ type: "redacted_thinking", data: REDACTED_DATA });
    blocks.push({ type: "thinking", thinking, signature: signThinking(thinking) });
  }
  const offered = (body.tools ?? []).filter((t: any) => !t.type || t.type === "custom").map((t: any) => ({ name: t.name, schema: t.input_schema }));
  const scripted = script?.({ tools: offered, text: conversationText(body.messages), answered: hasToolResult(body) });
  if (scripted && "text" in scripted) return { blocks: [...blocks, { type: "text", text: scripted.text }], stop: "end_turn", searches };
  if (scripted) return { blocks: [...blocks, { type: "tool_use", id: `toolu_01${randomBytes(12).toString("hex")}`, name: scripted.call.name, input: scripted.call.input }], stop: "tool_use", searches };
  // Native structured outputs: the answer is JSON text matching output_config.format.schema.
  if (body.output_config?.format?.type === "json_schema") {
    blocks.push({ type: "text", text: JSON.stringify(sampleFor(body.output_config.format.schema)) });
    return { blocks, stop: "end_turn", searches };
  }
  // Asked about the latest news, the model answers from its searches, citing the first result.
  if (searches && /latest/i.test(lastUserText(body))) {
    blocks.push({ type: "text", text: SEARCHED, citations: [{ type: "web_search_result_location", url: "https://example.com/0", title: "Result 0", encrypted_index: "Eo8BCioIAhgBIiQ", cited_text: "The gateway shipped." }] });
    return { blocks, stop: "end_turn", searches };
  }
  let tools = (body.tools ?? []).filter((t: any) => !t.type || t.type === "custom");
  // JSON beside tools (the gateway's json_output offered with the client's own, a call forced): the model calls the
  // client's tools first, and once their results are back answers through json_output.
  const json = tools.length > 1 && body.tool_choice?.type === "any" ? tools.find((t: any) => t.name === "json_output") : undefined;
  if (json && hasToolResult(body)) {
    blocks.push({ type: "tool_use", id: `toolu_json${randomBytes(6).toString("hex")}`, name: json.name, input: sampleFor(json.input_schema), caller: { type: "direct" } });
    return { blocks, stop: "tool_use", searches };
  }
  if (json) tools = tools.filter((t: any) => t !== json);
  if (tools.length && body.tool_choice?.type !== "none" && !hasToolResult(body)) {
    const forced = body.tool_choice?.type === "tool" ? tools.filter((t: any) => t.name === body.tool_choice.name) : tools;
    const n = body.tool_choice?.disable_parallel_tool_use ? 1 : Math.min(2, forced.length);
    // Forced tool use (any/tool) answers with the tool call alone, no preamble.
    if (body.tool_choice?.type !== "tool" && body.tool_choice?.type !== "any") blocks.push({ type: "text", text: "Let me check." });
    for (let i = 0; i < n; i++) blocks.push({ type: "tool_use", id: `toolu_fake${i}`, name: forced[i].name, input: toolInput(forced[i].input_schema, { city: i === 0 ? "Paris" : "Tokyo", unit: "celsius" }), caller: { type: "direct" } });
    return { blocks, stop: "tool_use", searches };
  }
  const pieces = words(hasToolResult(body) ? "The weather is sunny." : text);
  const cut = pieces.slice(0, Math.max(1, body.max_tokens));
  blocks.push({ type: "text", text: cut.join("") });
  return { blocks, stop: cut.length < pieces.length ? "max_tokens" : "end_turn", searches };
}

export async function startFakeAnthropic(opts: { burst?: boolean } = {}): Promise<FakeAnthropic> {
  const seenPrefixes = new Set<string>();
  const fake: FakeAnthropic = {
    baseUrl: "",
    requests: [],
    failures: [],
    eventDelayMs: 0,
    aborted: 0,
    close: () => server.close(),
  };

  function usageFor(body: any, output: number, searches: number) {
    const input = JSON.stringify(body.messages).length >> 2;
    let read = 0;
    let write = 0;
    if (JSON.stringify(body).includes('"cache_control"')) {
      const key = JSON.stringify({ tools: body.tools, system: body.system });
      const n = key.length >> 2;
      if (seenPrefixes.has(key)) read = n;
      else { seenPrefixes.add(key); write = n; }
    }
    // Search results are read as input; the searches themselves are counted apart (billed per search).
    return { input_tokens: input + searches * 100, cache_creation_input_tokens: write, cache_read_input_tokens: read, output_tokens: output, ...(searches ? { server_tool_use: { web_search_requests: searches } } : {}) };
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const { method, path, headers, body } = await readRequest(req);
    fake.requests.push({ method, path, headers, body });
    const send = (status: number, json: unknown) => {
      res.writeHead(status, { "content-type": "application/json", "request-id": "req_fake_anthropic" });
      res.end(JSON.stringify(json));
    };
    const failure = fake.failures.shift();
    if (failure?.kind === "hang") return;
    if (failure?.kind === "status") return send(failure.status, errorBody(failure.status, failure.type, failure.message));
    if (req.method === "POST" && req.url === "/v1/messages/count_tokens") return send(...countTokensAnswer(req.headers, body));
    if (req.method !== "POST" || req.url !== "/v1/messages") return send(404, errorBody(404, "not_found_error", "Not found"));
    if (req.headers["x-api-key"] !== FAKE_ANTHROPIC_KEY) return send(401, errorBody(401, "authentication_error", "invalid x-api-key"));
    if (!req.headers["anthropic-version"]) return send(400, errorBody(400, "invalid_request_error", "anthropic-version: header is required"));
    if (!body || typeof body.max_tokens !== "number") return send(400, errorBody(400, "invalid_request_error", "max_tokens: Field required"));
    if (body.temperature !== undefined && body.temperature > 1) return send(400, errorBody(400, "invalid_request_error", "temperature: must be <= 1"));
    const invalid = serverToolError(body) ?? conversationError(body);
    if (invalid) return send(400, errorBody(400, "invalid_request_error", invalid));

    const planned = plan(body, fake.textFor?.(body), fake.script, fake.thinkingFor?.(body));
    const { stop, searches } = planned;
    const blocks = [...(fake.leadingBlocksFor?.(body) ?? []), ...planned.blocks];
    const output = blocks.reduce((n, b) => n + (JSON.stringify(b).length >> 2), 0);
    const usage = usageFor(body, output, searches);
    // A fresh id per message, as Anthropic gives (Claude Code merges streamed turns that share one).
    const id = `msg_01${alnum(22)}`;
    const model = fake.answersAs?.(body.model) ?? body.model;
    if (!body.stream) {
      return send(200, { id, type: "message", role: "assistant", model, content: blocks.map((b) => (b.type === "text" ? { ...b, citations: b.citations ?? null } : b)), stop_reason: stop, stop_sequence: null, usage: { ...usage, service_tier: "standard" } });
    }

    const events: [string, Record<string, unknown>][] = [];
    const push = (type: string, payload: Record<string, unknown> = {}) => events.push([type, { type, ...payload }]);
    push("message_start", { message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1, ...(searches ? { server_tool_use: { web_search_requests: 0 } } : {}) } } });
    push("ping");
    blocks.forEach((b, index) => {
      if (b.type === "thinking") {
        push("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
        for (const w of words(b.thinking)) push("content_block_delta", { index, delta: { type: "thinking_delta", thinking: w } });
        push("content_block_delta", { index, delta: { type: "signature_delta", signature: b.signature } });
      } else if (b.type === "compaction") {
        const { type, ...delta } = b;
        push("content_block_start", { index, content_block: { type, content: null } });
        push("content_block_delta", { index, delta: { type: "compaction_delta", ...delta } });
      } else if (b.type === "redacted_thinking" || b.type === "web_search_tool_result" || !KNOWN_BLOCKS.has(b.type)) {
        push("content_block_start", { index, content_block: b });
      } else if (b.type === "server_tool_use") {
        push("content_block_start", { index, content_block: { type: "server_tool_use", id: b.id, name: b.name, input: {} } });
        push("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) } });
      } else if (b.type === "text") {
        push("content_block_start", { index, content_block: { type: "text", text: "" } });
        for (const c of b.citations ?? []) push("content_block_delta", { index, delta: { type: "citations_delta", citation: c } });
        for (const w of words(b.text)) push("content_block_delta", { index, delta: { type: "text_delta", text: w } });
      } else {
        push("content_block_start", { index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {}, caller: b.caller } });
        push("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } });
        const json = JSON.stringify(b.input);
        for (let k = 0; k < json.length; k += 6) push("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: json.slice(k, k + 6) } });
      }
      push("content_block_stop", { index });
    });
    push("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: output, input_tokens: usage.input_tokens, cache_creation_input_tokens: usage.cache_creation_input_tokens, cache_read_input_tokens: usage.cache_read_input_tokens, ...(searches ? { server_tool_use: usage.server_tool_use } : {}) } });
    push("message_stop");

    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "request-id": "req_fake_anthropic" });
    const pace = failure ? undefined : fake.pace?.(body) ?? (opts.burst ? "burst" : undefined);
    const frame = ([type, data]: [string, Record<string, unknown>]) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
    const paced = pace === "burst" ? 0 : pace === "tail" ? events.length - 2 : events.length;
    const delay = typeof pace === "number" ? pace : pace === "tail" ? fake.eventDelayMs || 5 : fake.eventDelayMs;
    for (let i = 0; i < paced; i++) {
      if (failure?.kind === "error-event" && i === failure.afterEvents) {
        const t = failure.type ?? "overloaded_error";
        res.end(`event: error\ndata: ${JSON.stringify({ type: "error", error: { type: t, message: "Overloaded" } })}\n\n`);
        return;
      }
      if (failure?.kind === "die-mid-stream" && i === failure.afterEvents) {
        req.socket.destroy();
        return;
      }
      if (res.destroyed) { fake.aborted++; return; }
      res.write(frame(events[i]!));
      if (delay) await new Promise((r) => setTimeout(r, delay));
    }
    if (res.destroyed) {
      if (paced < events.length) fake.aborted++; // closing events never sent: the stream was cut
      return;
    }
    res.end(events.slice(paced).map(frame).join(""));
  }

  const server = await listenLoopback((req, res) => void handle(req, res));
  fake.baseUrl = server.origin;
  return fake;
}
