// Replaying a recorded coding-agent request through the gateway, in the agent's own protocol: send it (retargeted to
// another model), read the answer the way the agent reads it (every stream event, the framing checked), and build the
// agent's next request from that actual answer the way the agent does — what it keeps of the answer in its history
// (Claude Code keeps thinking blocks only from an answer that names the model it asked for; chat agents keep the
// fields their recording shows; Codex sends the output items back; Gemini CLI keeps the non-thought parts with their
// signatures), the tool results re-pointed at the answer's own call ids.
import type { AgentProtocol } from "../agents/agents.ts";
import type { AgentTurn } from "./agent-fixtures.ts";
import { assemble } from "./gemini-client.ts";
import type { OfferedTool } from "../upstreams/scripted-agent.ts";

export interface ReplayCall { id?: string; name: string; args: unknown }

export interface ReplayAnswer {
  status: number;
  /** The body as received (error bodies, for messages). */
  raw: string;
  streamed: boolean;
  /** The stream's closing event came last and the stream ended there (always true for a JSON answer). */
  complete: boolean;
  /** Every model name the answer gave (each stream event's), deduplicated. */
  models: string[];
  calls: ReplayCall[];
  text: string;
  /** Reasoning state the agent hands back signed: thinking signatures, encrypted reasoning, thought signatures. */
  signedReasoning: boolean;
  /** Token usage reported (undefined: the request did not ask for it, chat streams without include_usage). */
  usage: boolean | undefined;
  /** The answer as the agent appends it to its history (protocol-specific). */
  history: any;
}

const clone = <T>(v: T): T => structuredClone(v);

/** The recorded request aimed at `model`: the body's model field, or the Gemini path's model. */
export function retarget(turn: AgentTurn, model: string): { path: string; body: any } {
  const body = clone(turn.body);
  if (turn.protocol === "gemini") return { path: turn.path.replace(/\/models\/.+?:(stream)?[gG]enerateContent/, (m) => `/models/${model}:${m.split(":")[1]}`), body };
  body.model = model;
  return { path: turn.path, body };
}

export function authHeader(turn: AgentTurn, key: string): Record<string, string> {
  return turn.auth === "authorization" ? { authorization: `Bearer ${key}` } : { [turn.auth]: key };
}

/** The tools a request offers, as the scripted model sees them. */
export function offeredTools(protocol: AgentProtocol, body: any): OfferedTool[] {
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  if (protocol === "messages") return tools.filter((t) => !t.type || t.type === "custom").map((t) => ({ name: t.name, schema: t.input_schema }));
  if (protocol === "chat") return tools.filter((t) => t.type === "function").map((t) => ({ name: t.function.name, schema: t.function.parameters ?? {} }));
  if (protocol === "responses") return tools.filter((t) => t.type === "function" || t.type === "custom").map((t) => ({ name: t.name, schema: t.type === "function" ? t.parameters ?? {} : undefined }));
  return tools.flatMap((t) => t.functionDeclarations ?? []).map((d: any) => ({ name: d.name, schema: d.parametersJsonSchema ?? d.parameters ?? {} }));
}

/** Server-sent events: each event's `event:` name and `data:` text; `rest` is whatever came after the last event. */
function sse(text: string): { events: { event?: string; data: string }[]; rest: string } {
  const blocks = text.split(/\r?\n\r?\n/);
  const rest = blocks.pop() ?? "";
  const events = blocks.filter((b) => b.trim()).map((b) => {
    const lines = b.split(/\r?\n/);
    return { event: lines.find((l) => l.startsWith("event:"))?.slice(6).trim(), data: lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n") };
  });
  return { events, rest };
}

const sig = (id: unknown) => typeof id === "string" && id.includes("__sig__");

function readMessages(text: string, streamed: boolean): Omit<ReplayAnswer, "status" | "raw" | "streamed"> {
  let message: any;
  let complete = true;
  const models: string[] = [];
  let usage = false;
  if (!streamed) {
    message = JSON.parse(text);
    models.push(message.model);
    usage = typeof message.usage?.input_tokens === "number" && typeof message.usage?.output_tokens === "number";
  } else {
    const { events, rest } = sse(text);
    const data = events.map((e) => JSON.parse(e.data));
    const open = new Set<number>();
    const blocks: any[] = [];
    for (const [i, e] of data.entries()) {
      if (events[i]!.event !== e.type) complete = false; // every frame's event: line names its type
      if (e.type === "message_start") { message = e.message; models.push(e.message.model); }
      if (e.type === "content_block_start") { open.add(e.index); blocks[e.index] = { ...e.content_block, partial: "" }; }
      if (e.type === "content_block_delta") {
        const b = blocks[e.index];
        if (e.delta.type === "text_delta") b.text += e.delta.text;
        if (e.delta.type === "thinking_delta") b.thinking += e.delta.thinking;
        if (e.delta.type === "signature_delta") b.signature = e.delta.signature;
        if (e.delta.type === "input_json_delta") b.partial += e.delta.partial_json;
      }
      if (e.type === "content_block_stop") open.delete(e.index);
      if (e.type === "message_delta") usage = typeof message?.usage?.input_tokens === "number" && typeof e.usage?.output_tokens === "number";
    }
    complete &&= data[0]?.type === "message_start" && data.at(-1)?.type === "message_stop" && open.size === 0 && !rest.trim();
    message = { ...message, content: blocks.map(({ partial, ...b }) => (b.type === "tool_use" ? { ...b, input: partial ? JSON.parse(partial) : b.input } : b)) };
  }
  const content: any[] = message?.content ?? [];
  return {
    complete, models, usage,
    calls: content.filter((b) => b.type === "tool_use").map((b) => ({ id: b.id, name: b.name, args: b.input })),
    text: content.filter((b) => b.type === "text").map((b) => b.text).join(""),
    signedReasoning: content.some((b) => (b.type === "thinking" && b.signature) || b.type === "redacted_thinking" || (b.type === "tool_use" && sig(b.id))),
    history: { content, model: message?.model },
  };
}

function readChat(text: string, streamed: boolean, body: any): Omit<ReplayAnswer, "status" | "raw" | "streamed"> {
  let msg: any;
  let complete = true;
  const models: string[] = [];
  let usage: boolean | undefined;
  if (!streamed) {
    const json = JSON.parse(text);
    msg = json.choices[0].message;
    models.push(json.model);
    usage = typeof json.usage?.prompt_tokens === "number";
  } else {
    const { events, rest } = sse(text);
    complete = events.at(-1)?.data === "[DONE]" && !rest.trim();
    msg = { role: "assistant", content: null as string | null, tool_calls: [] as any[] };
    let finished = false;
    usage = body.stream_options?.include_usage ? false : undefined;
    for (const e of events.slice(0, -1)) {
      const c = JSON.parse(e.data);
      models.push(c.model);
      if (c.usage && typeof c.usage.prompt_tokens === "number") usage = true;
      const ch = c.choices?.[0];
      if (!ch) continue;
      const d = ch.delta ?? {};
      if (typeof d.content === "string") msg.content = (msg.content ?? "") + d.content;
      for (const k of ["reasoning_content", "reasoning"]) if (typeof d[k] === "string") msg[k] = (msg[k] ?? "") + d[k];
      if (Array.isArray(d.reasoning_details)) msg.reasoning_details = [...(msg.reasoning_details ?? []), ...d.reasoning_details];
      if (Array.isArray(d.thinking_blocks)) msg.thinking_blocks = [...(msg.thinking_blocks ?? []), ...d.thinking_blocks];
      for (const t of d.tool_calls ?? []) {
        const cur = (msg.tool_calls[t.index] ??= { id: t.id, type: "function", function: { name: "", arguments: "" } });
        if (t.id) cur.id = t.id;
        if (t.function?.name) cur.function.name += t.function.name;
        if (t.function?.arguments) cur.function.arguments += t.function.arguments;
      }
      if (ch.finish_reason) finished = true;
    }
    complete &&= finished;
  }
  const calls: any[] = msg.tool_calls ?? [];
  return {
    complete, models: [...new Set(models)], usage,
    calls: calls.map((t) => ({ id: t.id, name: t.function.name, args: JSON.parse(t.function.arguments || "{}") })),
    text: msg.content ?? "",
    signedReasoning: (msg.reasoning_details ?? []).some((d: any) => d.signature || d.data) || (msg.thinking_blocks ?? []).some((b: any) => b.signature) || calls.some((t) => sig(t.id)),
    history: msg,
  };
}

function readResponses(text: string, streamed: boolean): Omit<ReplayAnswer, "status" | "raw" | "streamed"> {
  let response: any;
  let complete = true;
  const models: string[] = [];
  if (!streamed) {
    response = JSON.parse(text);
    models.push(response.model);
  } else {
    const { events, rest } = sse(text);
    const data = events.map((e) => JSON.parse(e.data));
    let seq = -1;
    for (const [i, e] of data.entries()) {
      if (events[i]!.event !== e.type || !(e.sequence_number > seq)) complete = false;
      seq = e.sequence_number;
      if (e.response?.model) models.push(e.response.model);
    }
    complete &&= data.at(-1)?.type === "response.completed" && !rest.trim();
    response = data.at(-1)?.response;
  }
  const output: any[] = response?.output ?? [];
  return {
    complete, models: [...new Set(models)],
    usage: typeof response?.usage?.input_tokens === "number" && typeof response?.usage?.output_tokens === "number",
    calls: output.filter((it) => it.type === "function_call" || it.type === "custom_tool_call").map((it) => ({ id: it.call_id, name: it.name, args: it.type === "function_call" ? JSON.parse(it.arguments) : it.input })),
    text: output.filter((it) => it.type === "message").flatMap((it) => it.content).filter((p: any) => p.type === "output_text").map((p: any) => p.text).join(""),
    signedReasoning: output.some((it) => (it.type === "reasoning" && it.encrypted_content) || sig(it.call_id)),
    history: output,
  };
}

function readGemini(text: string, streamed: boolean): Omit<ReplayAnswer, "status" | "raw" | "streamed"> {
  let chunks: any[];
  let complete = true;
  if (!streamed) chunks = [JSON.parse(text)];
  else {
    const { events, rest } = sse(text);
    chunks = events.map((e) => JSON.parse(e.data));
    // Gemini ends a stream at EOF: the last chunk carries the finish reason, and only the last one does.
    complete = !rest.trim() && !!chunks.at(-1)?.candidates?.[0]?.finishReason && chunks.filter((c) => c.candidates?.[0]?.finishReason).length === 1;
  }
  const a = assemble(chunks);
  return {
    complete, models: [...new Set(chunks.map((c) => c.modelVersion))],
    usage: typeof a.usage?.promptTokenCount === "number" && typeof a.usage?.totalTokenCount === "number",
    calls: a.parts.filter((p) => p.functionCall).map((p) => ({ id: p.functionCall.id, name: p.functionCall.name, args: p.functionCall.args })),
    text: a.parts.filter((p) => typeof p.text === "string").map((p) => p.text).join(""),
    signedReasoning: a.parts.some((p) => typeof p.thoughtSignature === "string" && p.thoughtSignature !== "skip_thought_signature_validator"),
    history: a.parts,
  };
}

/** Claude Code's answer to a model that refuses mid-conversation system messages: the same request without them. */
const SYSTEM_REFUSED = "role 'system' is not supported on this model";

/** Sends the recorded request, retargeted to `model`, and reads the answer as the agent does. */
export async function replay(gatewayUrl: string, turn: AgentTurn, model: string, key: string, body?: any): Promise<ReplayAnswer> {
  const target = retarget(turn, model);
  let sent = body ?? target.body;
  const post = () => fetch(`${gatewayUrl}${target.path}`, { method: turn.method, headers: { ...turn.headers, ...authHeader(turn, key) }, body: JSON.stringify(sent) });
  let res = await post();
  let raw = await res.text();
  if (turn.protocol === "messages" && res.status === 400 && raw.includes(SYSTEM_REFUSED)) {
    sent = { ...sent, messages: sent.messages.filter((m: any) => m.role !== "system") };
    res = await post();
    raw = await res.text();
  }
  const streamed = (res.headers.get("content-type") ?? "").includes("text/event-stream");
  const empty = { complete: false, models: [], calls: [], text: "", signedReasoning: false, usage: undefined, history: undefined };
  if (res.status !== 200) return { status: res.status, raw, streamed, ...empty };
  const read = turn.protocol === "messages" ? readMessages(raw, streamed)
    : turn.protocol === "chat" ? readChat(raw, streamed, sent)
    : turn.protocol === "responses" ? readResponses(raw, streamed)
    : readGemini(raw, streamed);
  return { status: res.status, raw, streamed, ...read };
}

/** Old call id -> new call id, by position. */
function idMap(oldIds: (string | undefined)[], answer: ReplayAnswer): Map<string, string | undefined> {
  return new Map(oldIds.map((id, i) => [id ?? `#${i}`, answer.calls[i]?.id]));
}

/** The first message at or after `from` that the assistant/model wrote: turn 1's answer in the agent's history. */
function answerIndex(list: any[], from: number, isAnswer: (m: any) => boolean): number {
  const i = list.findIndex((m, k) => k >= from && isAnswer(m));
  if (i < 0) throw new Error("the recorded next turn holds no answer to replace");
  return i;
}

const pick = (from: any, like: any) => Object.fromEntries(Object.keys(like).filter((k) => k in from).map((k) => [k, from[k]]));

/**
 * The agent's next request built from the answer it actually got: the recorded next turn with the recorded answer
 * replaced by this one (kept the way the agent keeps it) and its tool results pointed at this answer's calls.
 */
export function nextRequest(first: AgentTurn, next: AgentTurn, answer: ReplayAnswer, model: string): any {
  const body = retarget(next, model).body;
  if (next.protocol === "messages") {
    const msgs: any[] = body.messages;
    const k = answerIndex(msgs, first.body.messages.length, (m) => m.role === "assistant");
    const ids = idMap(msgs[k].content.filter((b: any) => b.type === "tool_use").map((b: any) => b.id), answer);
    // Claude Code's rule: thinking from an answer that names another model than the one asked for is dropped.
    const keepThinking = answer.history.model === model;
    msgs[k] = { role: "assistant", content: answer.history.content.filter((b: any) => keepThinking || (b.type !== "thinking" && b.type !== "redacted_thinking")) };
    for (const m of msgs.slice(k + 1)) for (const b of Array.isArray(m.content) ? m.content : []) if (b.type === "tool_result" && ids.has(b.tool_use_id)) b.tool_use_id = ids.get(b.tool_use_id);
    return body;
  }
  if (next.protocol === "chat") {
    const msgs: any[] = body.messages;
    const k = answerIndex(msgs, first.body.messages.length, (m) => m.role === "assistant" && m.tool_calls?.length);
    const old = msgs[k];
    const ids = idMap(old.tool_calls.map((t: any) => t.id), answer);
    const kept: any = { ...pick(answer.history, old), role: "assistant" };
    // What the agent keeps: the fields its recording shows, each call with whatever the agent adds to it.
    kept.content = answer.history.content ?? old.content;
    // opencode and Qwen Code send the answer's reasoning text back as reasoning_content, whichever field it came in.
    const thought = answer.history.reasoning_content ?? answer.history.reasoning;
    if ("reasoning_content" in old && thought !== undefined) kept.reasoning_content = thought;
    kept.tool_calls = answer.history.tool_calls.map((t: any, i: number) => ({ ...old.tool_calls[i], id: t.id, type: "function", function: { name: t.function.name, arguments: t.function.arguments } }));
    msgs[k] = kept;
    for (const m of msgs.slice(k + 1)) if (m.role === "tool" && ids.has(m.tool_call_id)) m.tool_call_id = ids.get(m.tool_call_id);
    return body;
  }
  if (next.protocol === "responses") {
    const items: any[] = body.input;
    const from = answerIndex(items, first.body.input.length, (it) => ["reasoning", "function_call", "custom_tool_call"].includes(it.type) || (it.type === "message" && it.role === "assistant"));
    let to = from;
    while (to < items.length && !String(items[to].type).endsWith("_call_output")) to++;
    const old = items.slice(from, to);
    const ids = idMap(old.filter((it) => it.call_id).map((it) => it.call_id), answer);
    // Codex sends the output items back as it got them (the fields its recording shows for each type).
    const kept = answer.history.map((it: any) => {
      const like = old.find((o) => o.type === it.type);
      return like ? pick(it, like) : it;
    });
    items.splice(from, to - from, ...kept);
    for (const it of items.slice(from + kept.length)) if (it.call_id && ids.has(it.call_id)) it.call_id = ids.get(it.call_id);
    return body;
  }
  const contents: any[] = body.contents;
  const k = answerIndex(contents, first.body.contents.length, (c) => c.role === "model");
  const oldCalls = contents[k].parts.filter((p: any) => p.functionCall).map((p: any) => p.functionCall);
  // Gemini CLI keeps the non-thought parts with their signatures; a call without an id gets the one it made.
  const parts = answer.history.filter((p: any) => !p.thought).map((p: any, i: number) => (p.functionCall && !p.functionCall.id && oldCalls[i]?.id ? { ...p, functionCall: { ...p.functionCall, id: oldCalls[i].id } } : p));
  contents[k] = { ...contents[k], parts };
  const newCalls = parts.filter((p: any) => p.functionCall).map((p: any) => p.functionCall);
  let n = 0;
  for (const c of contents.slice(k + 1)) {
    for (const p of c.parts ?? []) {
      if (!p.functionResponse) continue;
      const call = newCalls[n++];
      if (!call) continue;
      p.functionResponse.name = call.name;
      if (p.functionResponse.id !== undefined) p.functionResponse.id = call.id;
    }
  }
  return body;
}
