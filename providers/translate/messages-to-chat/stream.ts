// Chat completion chunks -> Anthropic Messages events, event by event in constant memory (reference §3.11).
// Every frame has `event:` equal to the JSON `type`; block indexes are contiguous from 0; message_start goes first
// even for an empty completion; the finish reason is held until [DONE] so message_delta carries the final usage.
// Upstream reasoning (reasoning_content / reasoning text, reasoning_details) is a thinking block whose signature —
// what a replay needs, as a blob (reasoning.ts) — goes out as a signature_delta when the block closes, as Anthropic's does.
// Upstreams emit parallel tool calls one after another: a new tool index closes the open block. A fragment for an
// already-closed tool (interleaving, never seen from real upstreams) is still delivered on that tool's own block
// index, which index-keyed clients (the Anthropic SDK, vercel/ai) apply correctly.
import type { SseEvent } from "../../../core/sse/parse.ts";
import { GatewayError } from "../../../core/errors.ts";
import { openAIToAnthropicUsage } from "../../codecs/anthropic-messages/usage.ts";
import { messageIdOf, stopReasonOf } from "./response.ts";
import { throwIfChatStreamError } from "../chat-stream-error.ts";
import { reasoningText, thinkingSignature, type ThinkingScope } from "./reasoning.ts";

type Open = "none" | "text" | "thinking" | "tool";

const ev = (type: string, payload: Record<string, unknown>): SseEvent => ({ event: type, data: JSON.stringify({ type, ...payload }) });

export class ChatToMessagesStream {
  private started = false;
  private nextIndex = 0;
  private open: Open = "none";
  private openToolIndex = -1;
  /** OpenAI tool index -> Anthropic block index. */
  private readonly toolBlocks = new Map<number, number>();
  private finish: string | null = null;
  private refusal = false;
  private usage: unknown = undefined;
  /** The open thinking block's opaque reasoning and the field its text came in (its signature when it closes). */
  private details: unknown[] = [];
  private textField: string | undefined;
  done = false;

  constructor(private readonly opts: { provider: string; model?: string; scope?: ThinkingScope }) {}

  private start(chunk: any, out: SseEvent[]): void {
    if (this.started) return;
    this.started = true;
    out.push(ev("message_start", {
      message: {
        id: messageIdOf(chunk?.id), type: "message", role: "assistant", model: chunk?.model ?? this.opts.model ?? "",
        content: [], stop_reason: null, stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
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
    let index = this.toolBlocks.get(k);
    if (index === undefined) {
      this.close(out);
      index = this.nextIndex++;
      this.toolBlocks.set(k, index);
      out.push(ev("content_block_start", { index, content_block: { type: "tool_use", id: tc.id ?? `toolu_${k}`, name: tc.function?.name ?? "", input: {}, caller: { type: "direct" } } }));
      this.open = "tool";
      this.openToolIndex = k;
    }
    const args = tc.function?.arguments;
    if (typeof args === "string" && args) out.push(ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: args } }));
  }

  private finishStream(): SseEvent[] {
    const out: SseEvent[] = [];
    this.start(undefined, out);
    this.close(out);
    this.done = true;
    const u = openAIToAnthropicUsage(this.usage);
    const stop = this.refusal && (!this.finish || this.finish === "stop") ? "refusal" : stopReasonOf(this.finish);
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

export async function* chatToMessagesStream(events: AsyncIterable<SseEvent>, opts: { provider: string; model?: string; scope?: ThinkingScope }): AsyncGenerator<SseEvent> {
  const t = new ChatToMessagesStream(opts);
  for await (const e of events) {
    const out = t.push(e);
    for (let i = 0; i < out.length; i++) yield out[i]!;
    if (t.done) return;
  }
  yield* t.end();
}
