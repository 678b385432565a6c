// Chat completion chunks -> Responses semantic events, in order, each with `event:` equal to its `type` and a
// sequence_number from 0: response.created, response.in_progress, then per output item output_item.added, (for a
// message) content_part.added, output_text.delta..., output_text.done, content_part.done, (for a function call)
// function_call_arguments.delta..., .done, then output_item.done; last response.completed (response.incomplete on
// length / content_filter) carrying the whole response and usage. Upstream reasoning text is a reasoning item
// (reasoning_summary_part / reasoning_summary_text events); the upstream's signed reasoning state (reasoning_details,
// whole blocks) becomes its encrypted_content, in output_item.done and the terminal event. At most one message or
// reasoning item is open. Function calls are keyed by their chat tool index (reference §1.5: id and name come once,
// on an index's first fragment; fragments of parallel calls — and text or reasoning, as DeepSeek's reasoning_content —
// may come between a call's fragments), each its own item with its own output_index, so several items can be open at
// once and every argument fragment goes to its call's item (the openai SDK's accumulator and Codex find an item by
// output_index / item_id, not by being the last). Each item's output_index is its place in the order items were added,
// which is also its place in the terminal response's output. Open calls whose arguments are already a complete JSON
// value close, in output_index order, when other content or a new call starts (so calls an upstream sends one after
// another close one after another, as before); the rest when the stream ends. Constant memory apart from the final response's output and one entry per call, which the
// protocol requires; the texts built up are held as pieces (text-pieces.ts), and the whole answer kept is bounded by
// server.upstream_limits.answer_bytes (answer-bound.ts: past it the stream fails with answer_too_large and the
// upstream is let go). Refusals are refusal content parts; chat logprobs ride on the output_text events. An upstream
// failure after response.created is a response.failed event before the error event. Web search sources (chat's
// delta.annotations, url_citation) are response.output_text.annotation.added events on the open output_text part, the
// first of them after a web_search_call item (added and done at once, at the next output_index: the search is only
// known once its sources are cited).
import type { SseEvent } from "../../../core/sse/parse.ts";
import { GatewayError } from "../../../core/errors.ts";
import { failedResponseError } from "../../../core/responses/failed-error.ts";
import { newId, reasoningItem, responseShell, responsesUsage, servedTier, shownResponse, statusOf, type AnswerContext, type ResponseEcho } from "./response.ts";
import { clientItem, withFull } from "./reasoning.ts";
import { throwIfChatStreamError } from "../chat-stream-error.ts";
import { clientName } from "./tools.ts";
import { TextPieces } from "../text-pieces.ts";
import { AnswerBound } from "../../answer-bound.ts";
import { callStatus, wholeJson } from "./call-status.ts";
import { responsesAnnotation, webSearchCall } from "./annotations.ts";
import { setNextSequence } from "../../../core/sse/next-sequence.ts";

/**
 * A message item: its closed content parts, and the open one (output_text, or refusal) with its annotations and
 * `from`, where it starts in the chat content (chat annotations count from the content's start).
 */
interface OpenMessage { kind: "message"; id: string; index: number; parts: unknown[]; part: "output_text" | "refusal"; text: TextPieces; logprobs: unknown[]; annotations: unknown[]; from: number }

/** `field`: the chat field its text came in (reasoning_content, reasoning), which a later turn sends it back in. */
interface OpenReasoning { kind: "reasoning"; id: string; index: number; text: TextPieces; details: unknown[]; field?: string }
/** `name` (and `namespace`) as the client knows the tool (flattened namespace tools are named back); `done` once closed. */
interface OpenCall { kind: "call"; id: string; index: number; call_id: string; name: string; namespace?: string; args: TextPieces; done: boolean }

/**
 * How much of the answer a chunk adds to what the stream keeps: its texts' characters, and the logprob entries and
 * signed reasoning blocks it carries (kept as the objects they are) at their JSON size, as the upstream's JSON answer
 * would carry them, so a stream is cut where that answer would be refused. Not the chunk's own size: its envelope (id,
 * model, created...) is not kept, and counting it cut a stream of one-token chunks with logprobs at a fiftieth of that.
 */
function answerChars(choice: any): number {
  const d = choice.delta;
  if (!d) return 0;
  let n = 0;
  const logprobs = choice.logprobs?.content;
  if (Array.isArray(logprobs) && logprobs.length && typeof d.content === "string" && d.content) n += JSON.stringify(logprobs).length;
  if (Array.isArray(d.reasoning_details) && d.reasoning_details.length) n += JSON.stringify(d.reasoning_details).length;
  if (typeof d.content === "string") n += d.content.length;
  if (typeof d.refusal === "string") n += d.refusal.length;
  if (Array.isArray(d.annotations) && d.annotations.length) n += JSON.stringify(d.annotations).length;
  const thought = d.reasoning_content ?? d.reasoning;
  if (typeof thought === "string") n += thought.length;
  if (Array.isArray(d.tool_calls)) {
    for (const tc of d.tool_calls) if (typeof tc?.function?.arguments === "string") n += tc.function.arguments.length;
  }
  return n;
}

/** Whether a call's arguments so far are a whole JSON object or array (so nothing but blanks can follow). */
const complete = (pieces: TextPieces): boolean => wholeJson(pieces.toString());

const callName = (o: OpenCall) => (o.namespace === undefined ? { name: o.name } : { name: o.name, namespace: o.namespace });

const contentPart = (type: "output_text" | "refusal", text: string, logprobs: unknown[] = [], annotations: unknown[] = []) =>
  type === "refusal" ? { type, refusal: text } : { type, text, annotations, logprobs };

export class ChatToResponsesStream {
  private seq = 0;
  private response: ReturnType<typeof responseShell> | undefined;
  /** The open message or reasoning item (calls begun before it may still be open). */
  private open: OpenMessage | OpenReasoning | undefined;
  /** Items added so far: the next item's output_index. */
  private added = 0;
  /** The output_index of each item in the response's output (closed items, kept in output_index order). */
  private readonly outputIndexes: number[] = [];
  /** Every function call by chat tool index, and the open ones in output_index order. */
  private readonly calls = new Map<number, OpenCall>();
  private openCalls: OpenCall[] = [];
  private finish: string | null = null;
  private usage: unknown;
  /** UTF-16 code units of chat content so far (where the next output_text part starts). */
  private contentLength = 0;
  /** Whether the web_search_call item went out (with the first annotation). */
  private searched = false;
  /**
   * Each output_text part so far, open or closed, in content order: where it starts in the chat content and its
   * annotations (the very list its part, kept for the final response, holds). Chat sends an answer's sources in one
   * delta at the end (OpenAI's search models, and the Claude and Gemini translators), so they may cite a part that a
   * call or reasoning item closed since.
   */
  private readonly textParts: { at: { item_id: string; output_index: number; content_index: number }; from: number; annotations: unknown[] }[] = [];
  done = false;

  private readonly provider: string;
  /** The answer kept so far (server.upstream_limits.answer_bytes). */
  private readonly bound: AnswerBound;

  get started(): boolean {
    return this.response !== undefined;
  }

  get nextSequence(): number {
    return this.seq;
  }

  constructor(private readonly echo: ResponseEcho, private readonly ctx: AnswerContext) {
    this.provider = ctx.provider;
    this.bound = new AnswerBound(ctx.provider, ctx.answerBytes);
  }

  private ev(type: string, payload: Record<string, unknown>, out: SseEvent[]): void {
    out.push({ event: type, data: JSON.stringify({ type, sequence_number: this.seq++, ...payload }) });
  }

  private start(chunk: any, out: SseEvent[]) {
    if (this.response) return this.response;
    const created = typeof chunk?.created === "number" ? chunk.created : Math.floor(Date.now() / 1000);
    this.response = responseShell(newId("resp"), created, this.echo, chunk?.model, chunk?.service_tier);
    this.ev("response.created", { response: this.response }, out);
    this.ev("response.in_progress", { response: this.response }, out);
    return this.response;
  }

  /** Closes whatever is open (the message or reasoning item and every open call), in output_index order. */
  private close(out: SseEvent[]): void {
    const o = this.open;
    let before = 0;
    while (o && before < this.openCalls.length && this.openCalls[before]!.index < o.index) before++;
    if (before) this.closeCalls(before, out);
    this.closeOpen(out);
    if (this.openCalls.length) this.closeCalls(this.openCalls.length, out);
  }

  /** Closes the open calls, from the first, whose arguments are whole (upstreams send calls one after another). */
  private closeWholeCalls(out: SseEvent[]): void {
    let n = 0;
    while (n < this.openCalls.length && complete(this.openCalls[n]!.args)) n++;
    if (n) this.closeCalls(n, out);
  }

  /** Closes the open message or reasoning item. */
  private closeOpen(out: SseEvent[]): void {
    const o = this.open;
    if (!o) return;
    this.open = undefined;
    this.closeItem(o, out);
  }

  /** Closes the first `n` open calls. */
  private closeCalls(n: number, out: SseEvent[]): void {
    const calls = this.openCalls;
    this.openCalls = n === calls.length ? [] : calls.slice(n);
    for (let i = 0; i < n; i++) {
      calls[i]!.done = true;
      this.closeItem(calls[i]!, out);
    }
  }

  private closeItem(o: OpenMessage | OpenReasoning | OpenCall, out: SseEvent[]): void {
    let item: Record<string, unknown>;
    if (o.kind === "reasoning") {
      const text = o.text.toString();
      if (text) {
        const part = { type: "summary_text", text };
        this.ev("response.reasoning_summary_text.done", { item_id: o.id, output_index: o.index, summary_index: 0, text }, out);
        this.ev("response.reasoning_summary_part.done", { item_id: o.id, output_index: o.index, summary_index: 0, part }, out);
      }
      item = reasoningItem(o.id, text, o.details, this.ctx, o.field)!;
    } else if (o.kind === "message") {
      this.closePart(o, out);
      // A message still open once the finish reason came is the one the answer was cut off in (length, content_filter).
      item = { type: "message", id: o.id, status: statusOf(this.finish).status, role: "assistant", content: o.parts };
    } else {
      const args = o.args.toString();
      this.ev("response.function_call_arguments.done", { item_id: o.id, output_index: o.index, name: o.name, arguments: args }, out);
      // A call the answer was cut off in (length) is incomplete: calls close mid-stream only once whole.
      item = { type: "function_call", id: o.id, call_id: o.call_id, ...callName(o), arguments: args, status: callStatus(args, statusOf(this.finish).status) };
    }
    this.ev("response.output_item.done", { output_index: o.index, item: clientItem(item, this.ctx.show) }, out);
    this.keep(o.index, item, this.response!.output, this.outputIndexes);
  }

  /** Puts an item into an output list at its output_index's place (an item added after a call may close before it). */
  private keep(index: number, item: unknown, output: unknown[], indexes: number[]): void {
    let at = indexes.length;
    while (at > 0 && indexes[at - 1]! > index) at--;
    output.splice(at, 0, item);
    indexes.splice(at, 0, index);
  }

  private closePart(o: OpenMessage, out: SseEvent[]): void {
    const at = { item_id: o.id, output_index: o.index, content_index: o.parts.length };
    const text = o.text.toString();
    const part = contentPart(o.part, text, o.logprobs, o.annotations);
    if (o.part === "refusal") this.ev("response.refusal.done", { ...at, refusal: text }, out);
    else this.ev("response.output_text.done", { ...at, text, logprobs: o.logprobs }, out);
    this.ev("response.content_part.done", { ...at, part }, out);
    o.parts.push(part);
  }

  /** Answer text (output_text) or a refusal (chat's delta.refusal): a content part of the open message item. */
  private text(delta: string, out: SseEvent[], type: "output_text" | "refusal" = "output_text", logprobs: unknown[] = []): void {
    let o = this.open;
    if (o?.kind !== "message") {
      // A call whose arguments are unfinished stays open: its later fragments still go to its item.
      this.closeOpen(out);
      this.closeWholeCalls(out);
      o = { kind: "message", id: newId("msg"), index: this.added++, parts: [], part: type, text: new TextPieces(), logprobs: [], annotations: [], from: this.contentLength };
      this.open = o;
      if (type === "output_text") this.textParts.push({ at: { item_id: o.id, output_index: o.index, content_index: 0 }, from: o.from, annotations: o.annotations });
      this.ev("response.output_item.added", { output_index: o.index, item: { type: "message", id: o.id, status: "in_progress", role: "assistant", content: [] } }, out);
      this.ev("response.content_part.added", { item_id: o.id, output_index: o.index, content_index: 0, part: contentPart(type, "") }, out);
    } else if (o.part !== type) {
      this.closePart(o, out);
      o.part = type;
      o.text = new TextPieces();
      o.logprobs = [];
      o.annotations = [];
      o.from = this.contentLength;
      if (type === "output_text") this.textParts.push({ at: { item_id: o.id, output_index: o.index, content_index: o.parts.length }, from: o.from, annotations: o.annotations });
      this.ev("response.content_part.added", { item_id: o.id, output_index: o.index, content_index: o.parts.length, part: contentPart(type, "") }, out);
    }
    o.text.append(delta);
    if (type === "output_text") this.contentLength += delta.length;
    // Chat's per-token logprobs ({token, logprob, bytes, top_logprobs}) are the Responses shape already.
    if (logprobs.length) o.logprobs.push(...logprobs);
    const at = { item_id: o.id, output_index: o.index, content_index: o.parts.length };
    if (type === "refusal") this.ev("response.refusal.delta", { ...at, delta }, out);
    else this.ev("response.output_text.delta", { ...at, delta, logprobs }, out);
  }

  /**
   * Chat annotations (url_citation) on the output_text part their start falls in (one a call or reasoning item closed
   * since included: its kept part gets them, so the final response carries them); the first after a web_search_call
   * item. Ones before any output_text are dropped.
   */
  private annotate(annotations: unknown[], out: SseEvent[]): void {
    for (const a of annotations) {
      const start = (a as any)?.url_citation?.start_index;
      const part = this.partAt(typeof start === "number" ? start : 0);
      const annotation = part && responsesAnnotation(a, part.from);
      if (!annotation) continue;
      if (!this.searched) this.search(out);
      this.ev("response.output_text.annotation.added", { ...part.at, annotation_index: part.annotations.length, annotation }, out);
      part.annotations.push(annotation);
    }
  }

  /** The output_text part chat content index `i` falls in (the last that starts at or before it). */
  private partAt(i: number): (typeof this.textParts)[number] | undefined {
    const parts = this.textParts;
    let lo = 0, hi = parts.length - 1, found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (parts[mid]!.from <= i) (found = mid), (lo = mid + 1);
      else hi = mid - 1;
    }
    return found < 0 ? parts[0] : parts[found];
  }

  /** The web_search_call item, added and done at once (the search is over once its sources are cited). */
  private search(out: SseEvent[]): void {
    this.searched = true;
    const id = newId("ws");
    const index = this.added++;
    this.ev("response.output_item.added", { output_index: index, item: webSearchCall(id, "in_progress") }, out);
    for (const step of ["in_progress", "searching", "completed"]) this.ev(`response.web_search_call.${step}`, { item_id: id, output_index: index }, out);
    const item = webSearchCall(id, "completed");
    this.ev("response.output_item.done", { output_index: index, item }, out);
    this.keep(index, item, this.response!.output, this.outputIndexes);
  }

  private openReasoning(out: SseEvent[]): OpenReasoning {
    if (this.open?.kind === "reasoning") return this.open;
    this.closeOpen(out);
    this.closeWholeCalls(out);
    const o: OpenReasoning = { kind: "reasoning", id: newId("rs"), index: this.added++, text: new TextPieces(), details: [] };
    this.open = o;
    this.ev("response.output_item.added", { output_index: o.index, item: { type: "reasoning", id: o.id, summary: [] } }, out);
    return o;
  }

  /** Upstream reasoning text (reasoning_content) as a reasoning item's summary, like the JSON response. */
  private reasoning(delta: string, field: string, out: SseEvent[]): void {
    const o = this.openReasoning(out);
    o.field ??= field;
    // The summary part opens with the first text (a redacted block may have opened the item without any).
    if (!o.text.length) this.ev("response.reasoning_summary_part.added", { item_id: o.id, output_index: o.index, summary_index: 0, part: { type: "summary_text", text: "" } }, out);
    o.text.append(delta);
    this.ev("response.reasoning_summary_text.delta", { item_id: o.id, output_index: o.index, summary_index: 0, delta }, out);
  }

  /** Signed reasoning blocks (reasoning_details, each whole) join the open reasoning item's encrypted_content. */
  private reasoningDetails(details: unknown[], out: SseEvent[]): void {
    this.openReasoning(out).details.push(...details);
  }

  /** A tool-call fragment: the first of its chat index opens the call's item, later ones append to its arguments. */
  private tool(tc: any, out: SseEvent[]): void {
    const toolIndex = typeof tc.index === "number" ? tc.index : 0;
    let o = this.calls.get(toolIndex);
    if (o === undefined) {
      this.closeOpen(out);
      this.closeWholeCalls(out);
      o = { kind: "call", id: newId("fc"), index: this.added++, call_id: tc.id ?? newId("call"), ...clientName(this.ctx.names, tc.function?.name ?? ""), args: new TextPieces(), done: false };
      this.calls.set(toolIndex, o);
      this.openCalls.push(o);
      this.ev("response.output_item.added", { output_index: o.index, item: { type: "function_call", id: o.id, call_id: o.call_id, ...callName(o), arguments: "", status: "in_progress" } }, out);
    } else if (o.done) {
      // A fragment after its call was closed (only once its arguments were a whole JSON value): the item is final.
      return;
    }
    const delta = tc.function?.arguments;
    if (typeof delta === "string" && delta) {
      o.args.append(delta);
      this.ev("response.function_call_arguments.delta", { item_id: o.id, output_index: o.index, delta }, out);
    }
  }

  push(e: SseEvent): SseEvent[] {
    if (this.done) return [];
    if (e.data === "[DONE]") return this.end();
    const chunk = JSON.parse(e.data);
    throwIfChatStreamError(chunk, this.provider);
    const out: SseEvent[] = [];
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) {
      // The usage chunk may be the first to name the tier (Bedrock Converse says it last): the final response has it.
      if (this.response) Object.assign(this.response, servedTier(chunk.service_tier));
      return out;
    }
    // Before anything of it is kept or sent: past the bound, the stream fails here (the first chunk: before it began).
    this.bound.add(answerChars(choice));
    Object.assign(this.start(chunk, out), servedTier(chunk.service_tier));
    const d = choice.delta ?? {};
    const thought = d.reasoning_content ?? d.reasoning;
    if (typeof thought === "string" && thought) this.reasoning(thought, d.reasoning_content != null ? "reasoning_content" : "reasoning", out);
    if (Array.isArray(d.reasoning_details) && d.reasoning_details.length) this.reasoningDetails(d.reasoning_details, out);
    if (typeof d.content === "string" && d.content) this.text(d.content, out, "output_text", Array.isArray(choice.logprobs?.content) ? choice.logprobs.content : []);
    if (Array.isArray(d.annotations) && d.annotations.length) this.annotate(d.annotations, out);
    if (typeof d.refusal === "string" && d.refusal) this.text(d.refusal, out, "refusal");
    for (const tc of d.tool_calls ?? []) this.tool(tc, out);
    if (choice.finish_reason) this.finish = choice.finish_reason;
    return out;
  }

  end(): SseEvent[] {
    const out: SseEvent[] = [];
    const r = this.start(undefined, out);
    this.close(out);
    this.done = true;
    const s = statusOf(this.finish);
    this.terminal(s.status === "completed" ? "response.completed" : "response.incomplete", { ...r, ...s, usage: responsesUsage(this.usage) }, out);
    return out;
  }

  /** The terminal event: the whole response as the client may see it, the full one kept on the event (reasoning.ts). */
  private terminal(type: string, full: { output: unknown[]; [k: string]: unknown }, out: SseEvent[]): void {
    const shown = shownResponse(full, this.ctx.show);
    this.ev(type, { response: shown }, out);
    if (shown !== full) withFull(out[out.length - 1]!, full);
  }

  /**
   * The upstream failed after response.created: response.failed with what was output so far (the error event
   * itself is written by the gateway when the error reaches it). Nothing when the stream had not started: the client
   * then gets an HTTP error (and a fallback model may still serve it).
   */
  failed(err: unknown): SseEvent[] {
    if (!this.response || this.done) return [];
    this.done = true;
    const out: SseEvent[] = [];
    const { code, message } = failedResponseError(err);
    // The item open when the upstream failed is in the output as far as it got, status incomplete.
    const o = this.open;
    const output = [...this.response.output];
    const indexes = [...this.outputIndexes];
    if (o?.kind === "message") this.keep(o.index, { type: "message", id: o.id, status: "incomplete", role: "assistant", content: [...o.parts, contentPart(o.part, o.text.toString(), o.logprobs, o.annotations)] }, output, indexes);
    else if (o?.kind === "reasoning") this.keep(o.index, reasoningItem(o.id, o.text.toString(), o.details, this.ctx, o.field) ?? { type: "reasoning", id: o.id, summary: [] }, output, indexes);
    for (const c of this.openCalls) this.keep(c.index, { type: "function_call", id: c.id, call_id: c.call_id, ...callName(c), arguments: c.args.toString(), status: "incomplete" }, output, indexes);
    this.terminal("response.failed", { ...this.response, status: "failed", error: { code, message }, output, usage: responsesUsage(this.usage) }, out);
    return out;
  }

  /** The upstream closed without [DONE]: fine after a finish reason, a failure before it. */
  eof(): SseEvent[] {
    if (this.done) return [];
    if (this.finish) return this.end();
    throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${this.provider} ended the stream early`, { details: { provider: this.provider } });
  }
}

export async function* chatToResponsesStream(events: AsyncIterable<SseEvent>, echo: ResponseEcho, ctx: AnswerContext): AsyncIterable<SseEvent> {
  const t = new ChatToResponsesStream(echo, ctx);
  try {
    for await (const e of events) {
      const out = t.push(e);
      for (let i = 0; i < out.length; i++) yield out[i]!;
      if (t.done) return;
    }
    yield* t.eof();
  } catch (err) {
    yield* t.failed(err);
    // The gateway writes the error event (core/http/respond.ts): it continues this stream's numbering.
    if (t.started) setNextSequence(err, t.nextSequence);
    throw err;
  }
}
