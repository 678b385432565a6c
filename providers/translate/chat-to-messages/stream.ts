// Anthropic Messages stream -> chat completion chunks, event by event in constant memory (reference §3.10).
// The OpenAI tool-call index is the ordinal among tool calls, not the Anthropic block index; role goes out once,
// first; the finish chunk waits for message_stop so the cumulative usage is complete; usage is streamed only when
// the client asked (stream_options.include_usage). Thinking streams live as reasoning_content; each signed block then
// goes out whole as reasoning_details/thinking_blocks when it closes (its text is the only per-block state kept).
// Web search sources a text block cites (citations, citations_delta) become url_citation annotations spanning that
// block, all of the answer's sent together in one delta just before the finish, as OpenAI's search models send theirs:
// a client that keeps only the last value of a delta field (the openai SDK's stream helper) and one that joins every
// piece then both have each source once (a delta per block, with thinking between blocks, would leave the former
// only the last block's).
import type { SseEvent } from "../../../core/sse/parse.ts";
import { GatewayError } from "../../../core/errors.ts";
import { anthropicToOpenAIUsage } from "../../codecs/anthropic-messages/usage.ts";
import { finishReasonOf } from "./response.ts";
import { anthropicStreamError } from "../../codecs/anthropic-messages/errors.ts";
import { reasoningDetail, type ReasoningBlock } from "./reasoning.ts";
import { keptReasoning } from "./replay.ts";
import { addWebCitations } from "./citations.ts";
import type { UrlCitation } from "../url-citation.ts";
import { chatServiceTier } from "./service-tier.ts";

interface StreamOptions {
  includeUsage: boolean;
  provider: string;
  created?: number;
  jsonTool?: string;
  /** Keeps the answer's signed reasoning for a client that drops it (replay.ts). */
  keep?: (id: string, value: string) => void;
}

export class MessagesToChatStream {
  private id = "";
  private model = "";
  private toolCount = -1;
  /** Anthropic block index -> OpenAI tool index (one small entry per tool block). */
  private readonly toolIndex = new Map<number, number>();
  /** Block indexes of the tool blocks (and the JSON-mode block) that have streamed argument text. */
  private readonly withInput = new Set<number>();
  private usage: Record<string, any> = {};
  /** The tier that served it, by OpenAI's name: message_start's usage says it, and every chunk then carries it, as OpenAI's do. */
  private tier: string | undefined;
  private stopReason: string | null = null;
  /** Block index of the response_format tool, whose JSON fragments are streamed as content (the other tool_use blocks,
   * beside it, stay tool calls indexed without it). */
  private jsonBlock = -1;
  /** The open thinking block (its text is kept until content_block_stop, to send the signed block whole). */
  private thinkingBlock = -1;
  private thinkingText = "";
  private signature = "";
  private reasoningCount = -1;
  /** UTF-16 code units of content sent so far: where a cited text block starts. */
  private contentLength = 0;
  /** The open text block, where it starts in the content, and its citations (only once it has some). */
  private textBlock = -1;
  private textStart = 0;
  private citations: unknown[] | undefined;
  /** Annotations of closed text blocks, sent at message_stop. */
  private annotations: UrlCitation[] | undefined;
  /** With opts.keep: the reasoning_details sent and the tool-call ids, kept at message_stop (replay.ts). */
  private readonly kept?: { details: unknown[]; ids: string[] };
  done = false;

  constructor(private readonly opts: StreamOptions) {
    if (opts.keep) this.kept = { details: [], ids: [] };
  }

  private chunk(delta: Record<string, unknown>, finish: string | null = null): SseEvent {
    const c: Record<string, unknown> = {
      id: this.id, object: "chat.completion.chunk", created: this.opts.created ?? 0, model: this.model, ...this.served(),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    if (this.opts.includeUsage) c.usage = null;
    return { data: JSON.stringify(c) };
  }

  private served(): { service_tier?: string } {
    return this.tier ? { service_tier: this.tier } : {};
  }

  private content(text: string): SseEvent {
    this.contentLength += text.length;
    return this.chunk({ content: text });
  }

  /** The answer's annotations, in one delta, put before `out` (the finish). */
  private withAnnotations(out: SseEvent[]): SseEvent[] {
    const a = this.annotations;
    if (!a) return out;
    this.annotations = undefined;
    return [this.chunk({ annotations: a }), ...out];
  }

  /**
   * A finished reasoning block, whole, in one delta (reasoning_details and thinking_blocks). Whole rather than in
   * pieces because clients merge unknown delta fields differently: the openai SDK's stream helper keeps only the
   * last value (Object.assign), others append every piece; a whole block per delta is right for both.
   */
  private reasoningChunk(b: ReasoningBlock): SseEvent {
    const detail = reasoningDetail(b, ++this.reasoningCount);
    this.kept?.details.push(detail);
    return this.chunk({ reasoning_details: [detail], thinking_blocks: [b] });
  }

  /** One upstream event in, zero or more chat chunks out. */
  push(ev: SseEvent): SseEvent[] {
    const type = ev.event;
    if (type === "ping" || this.done) return [];
    const e = JSON.parse(ev.data);
    switch (type ?? e.type) {
      case "message_start": {
        this.id = e.message?.id ?? "";
        this.model = e.message?.model ?? "";
        Object.assign(this.usage, e.message?.usage);
        this.tier = chatServiceTier(this.usage.service_tier);
        return [this.chunk({ role: "assistant", content: "" })];
      }
      case "content_block_start": {
        const b = e.content_block;
        if (b?.type === "tool_use" && this.opts.jsonTool && b.name === this.opts.jsonTool) {
          // The first such block is the answer, as in the non-streaming one: a second would make the content two JSON
          // texts in a row (its pieces go nowhere: neither the JSON block nor a tool call).
          if (this.jsonBlock === -1) this.jsonBlock = e.index;
          return [];
        }
        if (b?.type === "tool_use") {
          const index = ++this.toolCount;
          this.toolIndex.set(e.index, index);
          this.kept?.ids.push(b.id);
          return [this.chunk({ tool_calls: [{ index, id: b.id, type: "function", function: { name: b.name, arguments: "" } }] })];
        }
        if (b?.type === "redacted_thinking") return [this.reasoningChunk({ type: "redacted_thinking", data: b.data })];
        if (b?.type === "thinking") {
          this.thinkingBlock = e.index;
          this.thinkingText = "";
          this.signature = typeof b.signature === "string" ? b.signature : "";
          return [];
        }
        if (b?.type === "text") {
          this.textBlock = e.index;
          this.textStart = this.contentLength;
          this.citations = Array.isArray(b.citations) && b.citations.length ? [...b.citations] : undefined;
          if (b.text) return [this.content(b.text)];
        }
        return [];
      }
      case "content_block_delta": {
        const d = e.delta;
        switch (d?.type) {
          case "text_delta": return d.text ? [this.content(d.text)] : [];
          case "citations_delta":
            if (e.index === this.textBlock && d.citation) (this.citations ??= []).push(d.citation);
            return [];
          case "input_json_delta": {
            if (!d.partial_json) return [];
            this.withInput.add(e.index);
            if (e.index === this.jsonBlock) return [this.content(d.partial_json)];
            const index = this.toolIndex.get(e.index);
            return index === undefined ? [] : [this.chunk({ tool_calls: [{ index, function: { arguments: d.partial_json } }] })];
          }
          case "thinking_delta":
            if (!d.thinking) return [];
            if (e.index === this.thinkingBlock) this.thinkingText += d.thinking;
            return [this.chunk({ reasoning_content: d.thinking })];
          case "signature_delta":
            if (e.index === this.thinkingBlock && typeof d.signature === "string") this.signature = d.signature;
            return [];
          default: return [];
        }
      }
      case "message_delta": {
        if (e.delta?.stop_reason !== undefined) this.stopReason = e.delta.stop_reason;
        // Cumulative counters: overwrite what is present, never add.
        for (const k in e.usage) if (e.usage[k] !== null && e.usage[k] !== undefined) this.usage[k] = e.usage[k];
        this.tier = chatServiceTier(this.usage.service_tier);
        // A refusal's explanation rides in stop_details (in the delta, as the Anthropic SDK reads it; beside it on
        // some hosts): chat's delta.refusal, as the non-streaming answer's message.refusal.
        const details = e.delta?.stop_details ?? e.stop_details;
        const explanation = e.delta?.stop_reason === "refusal" ? details?.explanation : undefined;
        return typeof explanation === "string" && explanation ? [this.chunk({ refusal: explanation })] : [];
      }
      case "message_stop": {
        this.done = true;
        const kept = this.kept && keptReasoning(this.kept.ids, this.kept.details);
        if (kept) this.opts.keep!(...kept);
        const jsonOnly = this.jsonBlock !== -1 && this.toolCount === -1 && this.stopReason === "tool_use";
        // JSON mode: the content is the tool's JSON, not the cited text.
        if (this.jsonBlock !== -1) this.annotations = undefined;
        const out = this.withAnnotations([this.chunk({}, jsonOnly ? "stop" : finishReasonOf(this.stopReason))]);
        if (this.opts.includeUsage) {
          out.push({ data: JSON.stringify({ id: this.id, object: "chat.completion.chunk", created: this.opts.created ?? 0, model: this.model, ...this.served(), choices: [], usage: anthropicToOpenAIUsage(this.usage) }) });
        }
        out.push({ data: "[DONE]" });
        return out;
      }
      case "error":
        throw anthropicStreamError(this.opts.provider, e);
      case "content_block_stop": {
        // A tool called without arguments streams no input text (or only ""): its input is {} (reference §2.4), and
        // clients parse the arguments, so they are sent as "{}", as OpenAI does and the non-streaming answer says.
        if (e.index === this.jsonBlock || this.toolIndex.has(e.index)) {
          if (this.withInput.delete(e.index)) return [];
          if (e.index === this.jsonBlock) return [this.content("{}")];
          return [this.chunk({ tool_calls: [{ index: this.toolIndex.get(e.index), function: { arguments: "{}" } }] })];
        }
        if (e.index === this.textBlock) {
          this.textBlock = -1;
          if (this.citations) addWebCitations(this.citations, this.textStart, this.contentLength, (this.annotations ??= []));
          this.citations = undefined;
          if (this.annotations && !this.annotations.length) this.annotations = undefined;
          return [];
        }
        if (e.index !== this.thinkingBlock) return [];
        this.thinkingBlock = -1;
        const block: ReasoningBlock = { type: "thinking", thinking: this.thinkingText, signature: this.signature };
        this.thinkingText = "";
        // Unsigned thinking cannot be replayed: the text already went out as reasoning_content.
        return block.signature ? [this.reasoningChunk(block)] : [];
      }
      default:
        return []; // event types added later
    }
  }

  /** The upstream ended: without message_stop the stream was truncated. */
  end(): SseEvent[] {
    if (this.done) return [];
    throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${this.opts.provider} ended the stream before message_stop`, { retryable: false, details: { provider: this.opts.provider } });
  }
}

export async function* messagesToChatStream(events: AsyncIterable<SseEvent>, opts: StreamOptions): AsyncGenerator<SseEvent> {
  const t = new MessagesToChatStream({ created: Math.floor(Date.now() / 1000), ...opts });
  for await (const ev of events) {
    const out = t.push(ev);
    for (let i = 0; i < out.length; i++) yield out[i]!;
    if (t.done) return;
  }
  yield* t.end();
}
