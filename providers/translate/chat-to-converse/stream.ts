// ConverseStream events (the driver names each by its :event-type) -> chat completion chunks, in constant memory
// (reference §2.4, §2.9). Text and reasoning blocks get no start event; a tool block starts with its id and name, then
// JSON string fragments. The tool index is the ordinal among tool blocks, mapped from contentBlockIndex. The finish
// chunk is sent at messageStop; usage (metadata, after messageStop in real captures — either order tolerated) then
// closes the stream with [DONE], with the service_tier metadata names. Signed reasoning goes out whole as reasoning_details when its block stops. In JSON mode
// the JSON tool's input fragments are the content, and its tool_use stop is finish_reason stop (tool_calls when the
// client's tools are called beside it, indexed without the JSON tool).
import type { SseEvent } from "../../../core/sse/parse.ts";
import { GatewayError } from "../../../core/errors.ts";
import { reasoningDetail, type ReasoningBlock } from "../chat-to-messages/reasoning.ts";
import { chatId, converseToOpenAIUsage, finishReasonOf } from "./response.ts";
import { markStop } from "../upstream-stop.ts";
import { converseStopOf } from "./stop-sequence.ts";
import { chatServiceTier } from "./service-tier.ts";

export class ConverseToChatStream {
  private readonly id = chatId();
  private toolCount = -1;
  private readonly toolIndex = new Map<number, number>();
  private reasoningText = "";
  private signature = "";
  private redacted = "";
  private reasoningCount = -1;
  private started = false;
  finish: string | null = null;
  /** Tool calls (chat index) whose arguments have begun. */
  private readonly withArguments = new Set<number>();
  /** The first JSON tool block (contentBlockIndex), and whether its input has begun. */
  private jsonBlock: number | undefined;
  private jsonBegun = false;
  usage: any = undefined;
  /** The tier that served it (metadata's serviceTier): the chunks from metadata on carry it, as OpenAI's all do. Real
   * streams send metadata last, after messageStop, so that is the usage chunk only. */
  private tier: string | undefined;
  done = false;

  /** stops: the stop sequences sent, for the one that matched (stop-sequence.ts). oneCall: only the first tool call is
   * kept (parallel_tool_calls: false, see response.ts). */
  constructor(private readonly opts: { includeUsage: boolean; provider: string; model: string; created?: number; jsonTool?: string; stops?: readonly string[]; oneCall?: boolean }) {}

  private chunk(delta: Record<string, unknown>, finish: string | null = null): SseEvent {
    const c: Record<string, unknown> = {
      id: this.id, object: "chat.completion.chunk", created: this.opts.created ?? 0, model: this.opts.model, ...this.served(),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    if (this.opts.includeUsage) c.usage = null;
    return { data: JSON.stringify(c) };
  }

  private served(): { service_tier?: string } {
    return this.tier ? { service_tier: this.tier } : {};
  }

  private role(out: SseEvent[]): void {
    if (this.started) return;
    this.started = true;
    out.push(this.chunk({ role: "assistant", content: "" }));
  }

  push(ev: SseEvent): SseEvent[] {
    if (this.done) return [];
    const e = JSON.parse(ev.data);
    const out: SseEvent[] = [];
    switch (ev.event) {
      case "messageStart":
        this.role(out);
        break;
      case "contentBlockStart": {
        const tu = e.start?.toolUse;
        if (tu && this.opts.jsonTool && tu.name === this.opts.jsonTool) {
          this.role(out);
          // The first such block is the answer, as in the JSON answer (response.ts): a second would make the content
          // two JSON texts in a row (its pieces go nowhere: neither the JSON block nor a tool call).
          this.jsonBlock ??= e.contentBlockIndex;
        } else if (tu && this.opts.oneCall && this.toolCount >= 0) {
          // parallel_tool_calls: false, which Converse cannot be told: a further call is left out, its deltas with it
          // (its block has no chat index), as in the JSON answer (response.ts).
        } else if (tu) {
          this.role(out);
          const index = ++this.toolCount;
          this.toolIndex.set(e.contentBlockIndex, index);
          out.push(this.chunk({ tool_calls: [{ index, id: tu.toolUseId, type: "function", function: { name: tu.name, arguments: "" } }] }));
        }
        break;
      }
      case "contentBlockDelta": {
        this.role(out);
        const d = e.delta ?? {};
        if (typeof d.text === "string") {
          if (d.text) out.push(this.chunk({ content: d.text }));
        } else if (d.toolUse && e.contentBlockIndex === this.jsonBlock) {
          if (typeof d.toolUse.input === "string" && d.toolUse.input) {
            this.jsonBegun = true;
            out.push(this.chunk({ content: d.toolUse.input }));
          }
        } else if (d.toolUse) {
          const index = this.toolIndex.get(e.contentBlockIndex);
          if (index !== undefined && typeof d.toolUse.input === "string" && d.toolUse.input) {
            this.withArguments.add(index);
            out.push(this.chunk({ tool_calls: [{ index, function: { arguments: d.toolUse.input } }] }));
          }
        } else if (d.reasoningContent) {
          const r = d.reasoningContent;
          if (typeof r.text === "string" && r.text) {
            this.reasoningText += r.text;
            out.push(this.chunk({ reasoning_content: r.text }));
          }
          if (typeof r.signature === "string") this.signature += r.signature;
          if (typeof r.redactedContent === "string") this.redacted += r.redactedContent;
        }
        break;
      }
      case "contentBlockStop": {
        // A tool called without arguments streams input "" (or no delta at all): chat clients parse arguments as
        // JSON, so it is "{}" (protocols-2.md §2.4), as the JSON answer has it.
        if (e.contentBlockIndex === this.jsonBlock && !this.jsonBegun) {
          this.jsonBegun = true;
          out.push(this.chunk({ content: "{}" }));
        }
        const index = this.toolIndex.get(e.contentBlockIndex);
        if (index !== undefined && !this.withArguments.has(index)) {
          this.withArguments.add(index);
          out.push(this.chunk({ tool_calls: [{ index, function: { arguments: "{}" } }] }));
        }
        let block: ReasoningBlock | undefined;
        if (this.redacted) block = { type: "redacted_thinking", data: this.redacted };
        else if (this.signature) block = { type: "thinking", thinking: this.reasoningText, signature: this.signature };
        if (block) out.push(this.chunk({ reasoning_details: [reasoningDetail(block, ++this.reasoningCount)], thinking_blocks: [block] }));
        this.reasoningText = this.signature = this.redacted = "";
        break;
      }
      case "messageStop":
        this.role(out);
        // The JSON tool's call is the answer, not a call for the client to make.
        this.finish = this.jsonBlock !== undefined && e.stopReason === "tool_use" && this.toolCount === -1 ? "stop" : finishReasonOf(e.stopReason);
        // What the finish_reason folds away rides on its chunk, for a Messages client (upstream-stop.ts).
        out.push(markStop(this.chunk({}, this.finish), converseStopOf(e.stopReason, e.additionalModelResponseFields, this.opts.stops ?? [])));
        if (this.usage) out.push(...this.close());
        break;
      case "metadata":
        this.usage = e.usage ?? {};
        this.tier = chatServiceTier(e.serviceTier);
        if (this.finish) out.push(...this.close());
        break;
      default:
        break; // unknown events are skipped, as the AWS SDK does
    }
    return out;
  }

  /** The usage chunk and [DONE]. No metadata came (EOF): usage null, as the ledger bills an estimate, not 0 tokens. */
  private close(): SseEvent[] {
    this.done = true;
    const out: SseEvent[] = [];
    if (this.opts.includeUsage) {
      out.push({ data: JSON.stringify({ id: this.id, object: "chat.completion.chunk", created: this.opts.created ?? 0, model: this.opts.model, ...this.served(), choices: [], usage: this.usage === undefined ? null : converseToOpenAIUsage(this.usage) }) });
    }
    out.push({ data: "[DONE]" });
    return out;
  }

  /** EOF. A stream without messageStop was cut short; one without metadata still ends (no usage to give). */
  end(): SseEvent[] {
    if (this.done) return [];
    if (!this.finish) throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${this.opts.provider} ended the stream before messageStop`, { details: { provider: this.opts.provider } });
    return this.close();
  }
}
