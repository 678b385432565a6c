// Chat completion chunks -> Anthropic Messages events, event by event in constant memory but for held-back tool calls
// (below; reference §3.11).
// Every frame has `event:` equal to the JSON `type`; block indexes are contiguous from 0; message_start goes first
// even for an empty completion; the finish reason is held until [DONE] so message_delta carries the final usage.
// Upstream reasoning (reasoning_content / reasoning text, reasoning_details) is a thinking block whose signature —
// what a replay needs, as a blob (reasoning.ts) — goes out as a signature_delta when the block closes, as Anthropic's does.
// Anthropic streams one content block at a time (start, deltas, stop), and clients rely on it: the Anthropic SDK's
// contentBlock event and vercel/ai read a tool_use block's input at its content_block_stop, so a delta after the stop
// is lost to them. Chat upstreams may interleave parallel tool calls' fragments by index (reference §1.5), so a tool
// call other than the open block's is held back (§3.11) — its id, name and arguments so far — until the open block
// closes, then goes out as its own block: start, the held arguments as one input_json_delta, further deltas live,
// stop. The open tool block closes when its arguments are a whole JSON object (tracked by a scan of each fragment,
// no copy), so calls sent one after another stream as they come, as before; when a held call is waiting it is then
// started at once; otherwise the open block closes when other content starts or the stream ends, and held calls
// follow in the order they appeared. One tool index at a time costs nothing more than the scan.
import type { SseEvent } from "../../../core/sse/parse.ts";
import { GatewayError } from "../../../core/errors.ts";
import { openAIToAnthropicUsage } from "../../codecs/anthropic-messages/usage.ts";
import { messageIdOf, stopReasonOf } from "./response.ts";
import { throwIfChatStreamError } from "../chat-stream-error.ts";
import { reasoningText, thinkingSignature, type ThinkingScope } from "./reasoning.ts";

type Open = "none" | "text" | "thinking" | "tool";

/** A tool call held back while another block is open: what came of it so far. */
interface HeldTool { id: string | undefined; name: string; args: string }

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
  /** The open tool block's arguments so far, as a JSON scanner sees them: nesting depth, inside a string, after a backslash, whether a value opened. */
  private depth = 0;
  private inString = false;
  private escaped = false;
  private began = false;
  /** OpenAI tool indexes whose blocks have started. */
  private readonly toolBlocks = new Set<number>();
  /** Tool calls held back until the open block closes, by OpenAI tool index, in the order they appeared. */
  private held: Map<number, HeldTool> | undefined;
  private finish: string | null = null;
  private refusal = false;
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
    const known = (this.usage as any)?.prompt_tokens > 0 ? openAIToAnthropicUsage(this.usage) : undefined;
    const usage = known ?? { input_tokens: this.opts.inputEstimate ?? 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
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
    out.push(ev("content_block_stop", { index: this.nextIndex - 1 }));
    this.open = "none";
    this.openToolIndex = -1;
  }

  private openBlock(kind: "text" | "thinking", out: SseEvent[]): number {
    if (this.open !== kind) {
      this.close(out);
      const block = kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "", signature: "" };
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
    if (reasoning.text) {
      const index = this.openBlock("thinking", out);
      this.textField ??= reasoning.field;
      out.push(ev("content_block_delta", { index, delta: { type: "thinking_delta", thinking: reasoning.text } }));
    }
    if (Array.isArray(d.reasoning_details) && d.reasoning_details.length) {
      this.openBlock("thinking", out);
      this.details.push(...d.reasoning_details);
    }
    if (typeof d.content === "string" && d.content) {
      const index = this.openBlock("text", out);
      out.push(ev("content_block_delta", { index, delta: { type: "text_delta", text: d.content } }));
    }
    if (typeof d.refusal === "string" && d.refusal) {
      this.refusal = true;
      const index = this.openBlock("text", out);
      out.push(ev("content_block_delta", { index, delta: { type: "text_delta", text: d.refusal } }));
    }
    if (Array.isArray(d.tool_calls)) for (const tc of d.tool_calls) this.tool(tc, out);
    if (choice.finish_reason) this.finish = choice.finish_reason;
    return out;
  }

  private tool(tc: any, out: SseEvent[]): void {
    const k: number = typeof tc.index === "number" ? tc.index : 0;
    const args = tc.function?.arguments;
    const more = typeof args === "string" && args !== "";
    if (this.open === "tool" && this.openToolIndex === k) {
      if (!more) return;
      this.scan(args);
      out.push(ev("content_block_delta", { index: this.nextIndex - 1, delta: { type: "input_json_delta", partial_json: args } }));
      if (this.held !== undefined && this.held.size && this.whole()) this.startHeld(out);
      return;
    }
    const held = this.held?.get(k);
    if (held !== undefined) {
      if (more) held.args += args;
      return;
    }
    // A fragment for a block already closed (after other content, or after its whole JSON): nothing valid can carry it.
    if (this.toolBlocks.has(k)) return;
    const name: string = tc.function?.name ?? "";
    // A new call while the open tool call may still be streaming, or behind calls already held: held back.
    if ((this.open === "tool" && !this.whole()) || this.held?.size) {
      (this.held ??= new Map()).set(k, { id: tc.id, name, args: more ? args : "" });
      return;
    }
    this.startTool(k, tc.id, name, more ? args : "", out);
  }

  /** Closes the open block and starts a tool_use block with the arguments so far. */
  private startTool(k: number, id: string | undefined, name: string, args: string, out: SseEvent[]): void {
    this.close(out);
    const index = this.nextIndex++;
    this.toolBlocks.add(k);
    out.push(ev("content_block_start", { index, content_block: { type: "tool_use", id: id ?? `toolu_${k}`, name, input: {}, caller: { type: "direct" } } }));
    this.open = "tool";
    this.openToolIndex = k;
    this.depth = 0;
    this.inString = this.escaped = this.began = false;
    if (args) {
      this.scan(args);
      out.push(ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: args } }));
    }
  }

  /** Closes the open block and starts the first held call (then the next, while the started one is already whole). */
  private startHeld(out: SseEvent[]): void {
    do {
      const [k, h] = this.held!.entries().next().value!;
      this.held!.delete(k);
      this.startTool(k, h.id, h.name, h.args, out);
    } while (this.held!.size && this.whole());
  }

  /** Follows the open tool block's JSON through one fragment, without copying it. */
  private scan(s: string): void {
    let { depth, inString, escaped } = this;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 92) escaped = true; // backslash
        else if (c === 34) inString = false; // quote
      } else if (c === 34) inString = true;
      else if (c === 123 || c === 91) { depth++; this.began = true; } // { [
      else if (c === 125 || c === 93) depth--; // } ]
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
  }

  /** Whether the open tool block's arguments are a whole JSON object or array (nothing but blanks can follow). */
  private whole(): boolean {
    return this.began && this.depth === 0 && !this.inString;
  }

  private finishStream(): SseEvent[] {
    const out: SseEvent[] = [];
    this.start(undefined, out);
    // Held calls follow the open block, each closed in turn.
    while (this.held?.size) this.startHeld(out);
    this.close(out);
    this.done = true;
    const u = openAIToAnthropicUsage(this.usage);
    const stop = stopReasonOf(this.finish, this.refusal);
    out.push(ev("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: u }));
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
