// Chat completion chunks -> Anthropic Messages events, event by event in constant memory but for held-back content
// (below; reference §3.11).
// Every frame has `event:` equal to the JSON `type`; block indexes are contiguous from 0; message_start goes first
// even for an empty completion; the finish reason is held until [DONE] so message_delta carries the final usage.
// Upstream reasoning (reasoning_content / reasoning text, reasoning_details) is a thinking block whose signature —
// what a replay needs, as a blob (reasoning.ts) — goes out as a signature_delta when the block closes, as Anthropic's does.
// Anthropic streams one content block at a time (start, deltas, stop), and clients rely on it: the Anthropic SDK's
// MessageStream events read the last block, and it and vercel/ai read a tool_use block's input at its
// content_block_stop, so a delta after the stop is lost to them. Chat upstreams may interleave a tool call's
// fragments with other calls' and with text or reasoning (reference §1.5). So a tool_use block opens at its call's
// first argument byte, not at its header (id and name, arguments ""): what comes before that byte — text, reasoning,
// other calls — goes out as it comes, and a call whose bytes never come (a no-parameter tool whose host sends "" and
// never "{}") gets its block, input {}, at the end of the stream. Once a tool block is open, whatever else arrives
// while its arguments are unfinished is held back (§3.11) — another call's id, name and arguments so far, text and
// reasoning as they came — and goes out, in the order it arrived, once the open call's arguments are whole: a held
// call as its own block (start, the held arguments as one input_json_delta, further deltas live, stop), held text or
// reasoning as one delta on its block. The open tool block's arguments are whole when they are a whole JSON object
// (tracked by a scan of each fragment, no copy), so calls sent one after another stream as they come; a call whose
// arguments never become whole holds the rest until the stream ends, then everything follows in order. One tool
// index at a time, with nothing between its fragments, costs nothing more than the scan. The scan (tool-input-json.ts)
// keeps back the object's closing brace to the block's end, so arguments that never become a JSON object still join
// to one, with them in rawInvalidInput as the JSON path has them (response.ts).
import type { SseEvent } from "../../../core/sse/parse.ts";
import { GatewayError } from "../../../core/errors.ts";
import { anthropicDeltaUsage, anthropicMessageUsage } from "../../codecs/anthropic-messages/usage.ts";
import { messageIdOf, messageStopOf } from "./response.ts";
import { upstreamStopOf, type UpstreamStop } from "../upstream-stop.ts";
import { throwIfChatStreamError } from "../chat-stream-error.ts";
import { reasoningText, thinkingSignature, type ThinkingScope } from "./reasoning.ts";
import { ToolInputJson } from "./tool-input-json.ts";

type Open = "none" | "text" | "thinking" | "tool";

/** A tool call held back while another call's arguments are unfinished: what came of it so far. */
interface HeldTool { kind: "tool"; k: number; id: string | undefined; name: string; args: string }
/** Text or reasoning held back likewise: its text so far (and, for reasoning, its opaque details and text field). */
interface HeldContent { kind: "text" | "thinking"; text: string; details: unknown[]; field: string | undefined }
type Held = HeldTool | HeldContent;
/** A call whose header came but none of its argument bytes yet: its block opens at its first byte (or at the end). */
interface Announced { id: string | undefined; name: string }

export interface StreamOptions {
  provider: string;
  model?: string;
  scope?: ThinkingScope;
  /** The gateway's estimate of the request's input tokens (CallOptions.inputEstimate), for message_start. */
  inputEstimate?: number;
}

const ev = (type: string, payload: Record<string, unknown>): SseEvent => ({ event: type, data: JSON.stringify({ type, ...payload }) });

export class ChatToMessagesStream {
  private started = false;
  private nextIndex = 0;
  private open: Open = "none";
  private openToolIndex = -1;
  /** The open tool block's arguments so far: what goes out of them live, and at the block's end (tool-input-json.ts). */
  private input = new ToolInputJson();
  /** OpenAI tool indexes whose blocks have started. */
  private readonly toolBlocks = new Set<number>();
  /** What waits for the open tool call's arguments to be whole, in the order it arrived (empty: nothing held). */
  private readonly held: Held[] = [];
  /** The held tool calls by OpenAI tool index, for their further fragments. */
  private readonly heldTools = new Map<number, HeldTool>();
  /** Calls with no argument bytes yet, by OpenAI tool index, in the order their headers came. */
  private readonly announced = new Map<number, Announced>();
  private finish: string | null = null;
  private refusal = false;
  /** What the upstream said of its stop where chat's finish_reason folds it (upstream-stop.ts). */
  private upstreamStop: UpstreamStop | undefined;
  private usage: unknown = undefined;
  /** The open thinking block's opaque reasoning and the field its text came in (its signature when it closes). */
  private details: unknown[] = [];
  private textField: string | undefined;
  done = false;

  constructor(private readonly opts: StreamOptions) {}

  private start(chunk: any, out: SseEvent[]): void {
    if (this.started) return;
    this.started = true;
    // Anthropic states the input in message_start, and some clients (@langchain/anthropic) read it only there: the
    // upstream's count when this chunk already has it, else the gateway's estimate; message_delta has the exact one.
    // Every field of Anthropic's usage is there, as in a JSON answer (anthropicMessageUsage).
    const known = (this.usage as any)?.prompt_tokens > 0;
    const usage = anthropicMessageUsage(known ? this.usage : { prompt_tokens: this.opts.inputEstimate ?? 0 }, chunk?.service_tier);
    out.push(ev("message_start", {
      message: {
        id: messageIdOf(chunk?.id), type: "message", role: "assistant", model: chunk?.model ?? this.opts.model ?? "",
        content: [], stop_reason: null, stop_sequence: null,
        usage: { ...usage, output_tokens: 0 },
      },
    }));
    out.push(ev("ping", {}));
  }

  private close(out: SseEvent[]): void {
    if (this.open === "none") return;
    if (this.open === "thinking") {
      const signature = thinkingSignature(this.opts.scope ?? { flavor: "chat", provider: this.opts.provider }, this.details, this.textField);
      out.push(ev("content_block_delta", { index: this.nextIndex - 1, delta: { type: "signature_delta", signature } }));
      this.details = [];
      this.textField = undefined;
    }
    if (this.open === "tool") this.inputDelta(this.input.end(), out);
    out.push(ev("content_block_stop", { index: this.nextIndex - 1 }));
    this.open = "none";
    this.openToolIndex = -1;
  }

  private openBlock(kind: "text" | "thinking", out: SseEvent[]): number {
    if (this.open !== kind) {
      this.close(out);
      // A text block has citations as a JSON answer's has (null: chat has none), so a client's folded message has them too.
      const block = kind === "text" ? { type: "text", text: "", citations: null } : { type: "thinking", thinking: "", signature: "" };
      out.push(ev("content_block_start", { index: this.nextIndex++, content_block: block }));
      this.open = kind;
    }
    return this.nextIndex - 1;
  }

  push(e: SseEvent): SseEvent[] {
    if (this.done) return [];
    if (e.data === "[DONE]") return this.finishStream();
    const chunk = JSON.parse(e.data);
    throwIfChatStreamError(chunk, this.opts.provider);
    const out: SseEvent[] = [];
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return out;
    this.start(chunk, out);
    const d = choice.delta ?? {};
    const reasoning = reasoningText(d);
    if (reasoning.text) this.content("thinking", reasoning.text, undefined, reasoning.field, out);
    if (Array.isArray(d.reasoning_details) && d.reasoning_details.length) this.content("thinking", "", d.reasoning_details, undefined, out);
    if (typeof d.content === "string" && d.content) this.content("text", d.content, undefined, undefined, out);
    if (typeof d.refusal === "string" && d.refusal) {
      this.refusal = true;
      this.content("text", d.refusal, undefined, undefined, out);
    }
    if (Array.isArray(d.tool_calls)) for (const tc of d.tool_calls) this.tool(tc, out);
    if (choice.finish_reason) {
      this.finish = choice.finish_reason;
      this.upstreamStop = upstreamStopOf(e);
    }
    return out;
  }

  /** Whether new content must wait: the open tool call's arguments are unfinished, or earlier content waits already. */
  private waiting(): boolean {
    return this.held.length > 0 || (this.open === "tool" && !this.whole());
  }

  /** Text or reasoning: on its block now, or held (joined to held content of its kind just before it) while waiting. */
  private content(kind: "text" | "thinking", text: string, details: unknown[] | undefined, field: string | undefined, out: SseEvent[]): void {
    if (this.waiting()) {
      const last = this.held[this.held.length - 1];
      const h = last !== undefined && last.kind === kind ? last : { kind, text: "", details: [], field: undefined };
      if (h !== last) this.held.push(h);
      h.text += text;
      if (details) h.details.push(...details);
      h.field ??= field;
      return;
    }
    this.emitContent(kind, text, details, field, out);
  }

  private emitContent(kind: "text" | "thinking", text: string, details: unknown[] | undefined, field: string | undefined, out: SseEvent[]): void {
    const index = this.openBlock(kind, out);
    if (kind === "thinking") {
      this.textField ??= field;
      if (details) this.details.push(...details);
    }
    if (text) out.push(ev("content_block_delta", { index, delta: kind === "text" ? { type: "text_delta", text } : { type: "thinking_delta", thinking: text } }));
  }

  private tool(tc: any, out: SseEvent[]): void {
    const k: number = typeof tc.index === "number" ? tc.index : 0;
    const args = tc.function?.arguments;
    const more = typeof args === "string" && args !== "";
    if (this.open === "tool" && this.openToolIndex === k) {
      if (!more) return;
      this.inputDelta(this.input.push(args), out);
      if (this.held.length && this.whole()) this.release(false, out);
      return;
    }
    const held = this.heldTools.get(k);
    if (held !== undefined) {
      if (more) held.args += args;
      return;
    }
    // A fragment for a block already stopped: it stopped only once its arguments were whole (or the stream ended),
    // so nothing but blanks can follow, and nothing valid can carry it.
    if (this.toolBlocks.has(k)) return;
    const seen = this.announced.get(k);
    // A header without argument bytes opens nothing yet: content after it must not wait on bytes that may never come.
    if (!more) {
      if (seen === undefined) this.announced.set(k, { id: tc.id, name: tc.function?.name ?? "" });
      return;
    }
    this.announced.delete(k);
    const id: string | undefined = seen?.id ?? tc.id;
    const name: string = seen?.name || (tc.function?.name ?? "");
    // The call's first bytes while the open tool call may still be streaming, or behind content already held: held back.
    if (this.waiting()) {
      const h: HeldTool = { kind: "tool", k, id, name, args };
      this.held.push(h);
      this.heldTools.set(k, h);
      return;
    }
    this.startTool(k, id, name, args, out);
  }

  /** Closes the open block and starts a tool_use block with the arguments so far. */
  private startTool(k: number, id: string | undefined, name: string, args: string, out: SseEvent[]): void {
    this.close(out);
    const index = this.nextIndex++;
    this.toolBlocks.add(k);
    out.push(ev("content_block_start", { index, content_block: { type: "tool_use", id: id ?? `toolu_${k}`, name, input: {}, caller: { type: "direct" } } }));
    this.open = "tool";
    this.openToolIndex = k;
    this.input = new ToolInputJson();
    if (args) this.inputDelta(this.input.push(args), out);
  }

  /** Some of the open tool block's input, if any goes out. */
  private inputDelta(json: string, out: SseEvent[]): void {
    if (json) out.push(ev("content_block_delta", { index: this.nextIndex - 1, delta: { type: "input_json_delta", partial_json: json } }));
  }

  /**
   * Sends what was held, in order, until a held call it starts has unfinished arguments (that call's block stays
   * open and the rest waits for it) — or, at the end of the stream (`all`), everything.
   */
  private release(all: boolean, out: SseEvent[]): void {
    while (this.held.length) {
      const h = this.held.shift()!;
      if (h.kind === "tool") {
        this.heldTools.delete(h.k);
        this.startTool(h.k, h.id, h.name, h.args, out);
        if (!all && !this.whole()) return;
      } else this.emitContent(h.kind, h.text, h.details, h.field, out);
    }
  }

  /** Whether the open tool block's arguments are a whole JSON object or array (nothing but blanks can follow). */
  private whole(): boolean {
    return this.input.whole;
  }

  private finishStream(): SseEvent[] {
    const out: SseEvent[] = [];
    this.start(undefined, out);
    // Held content follows the open block, in the order it arrived.
    this.release(true, out);
    // Calls whose argument bytes never came (no-parameter tools): each its own block, input {}.
    for (const [k, a] of this.announced) this.startTool(k, a.id, a.name, "", out);
    this.announced.clear();
    this.close(out);
    this.done = true;
    out.push(ev("message_delta", { delta: messageStopOf(this.finish, this.refusal, this.upstreamStop), usage: anthropicDeltaUsage(this.usage) }));
    out.push(ev("message_stop", {}));
    return out;
  }

  /** Upstream EOF. A stream that reached its finish reason is completed; one cut short is an error. */
  end(): SseEvent[] {
    if (this.done) return [];
    if (this.finish) return this.finishStream();
    throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${this.opts.provider} ended the stream early`, { details: { provider: this.opts.provider } });
  }
}

export async function* chatToMessagesStream(events: AsyncIterable<SseEvent>, opts: StreamOptions): AsyncGenerator<SseEvent> {
  const t = new ChatToMessagesStream(opts);
  for await (const e of events) {
    const out = t.push(e);
    for (let i = 0; i < out.length; i++) yield out[i]!;
    if (t.done) return;
  }
  yield* t.end();
}
