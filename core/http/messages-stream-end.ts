// How a Messages stream the guardrails stop mid-way (GUARDRAIL_BLOCKED: an output rule, an allow rule, output
// moderation) ends: as Anthropic ends a stream its own classifiers stop, a `message_delta` with stop_reason `refusal`
// (stop_details naming the rule) then `message_stop`, no `error` event. After an `error` event Claude Code takes the
// stream for a failed one and sends the request again without streaming (its fallback), so the blocked answer was
// generated and billed twice and it showed only "API Error: 400 ...", none of the text already sent; a refusal it
// shows as one, and stops. The text and thinking blocks still open are closed first, and a text block of its own says
// which rule blocked the answer (as the Gemini client's last candidate does). An open tool call (tool_use,
// server_tool_use, mcp_tool_use: its arguments cut short) is left unclosed: Claude Code starts a tool at its block's
// content_block_stop, so it ran the cut arguments, sent the result back and was blocked again, call after call.
// Other failures keep the `error` event.
import type { SseEvent } from "../sse/parse.ts";
import type { GatewayError } from "../errors.ts";
import type { Usage } from "../contracts/provider.ts";

const encode = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

export class MessagesStreamEnd {
  private begun = false;
  private stopped = false;
  /** Open blocks: index -> content block type. */
  private readonly open = new Map<number, string>();
  private nextIndex = 0;
  /** output_tokens as last told to the client (message_start's placeholder, a message_delta's count). */
  private outputTokens = 0;

  /** Keeps what an event sent to the client tells of the message: begun, its blocks open, ended. */
  note(ev: SseEvent): void {
    const type = ev.event;
    if (type !== "message_start" && type !== "content_block_start" && type !== "content_block_stop" && type !== "message_delta" && type !== "message_stop") return;
    if (type === "message_stop") {
      this.stopped = true;
      return;
    }
    let e: any;
    try {
      e = JSON.parse(ev.data);
    } catch {
      return;
    }
    if (type === "message_start") {
      this.begun = true;
      this.outputTokens = countOf(e?.message?.usage?.output_tokens, this.outputTokens);
    } else if (type === "message_delta") this.outputTokens = countOf(e?.usage?.output_tokens, this.outputTokens);
    else if (typeof e?.index === "number") {
      if (type === "content_block_start") {
        this.open.set(e.index, String(e?.content_block?.type));
        this.nextIndex = Math.max(this.nextIndex, e.index + 1);
      } else this.open.delete(e.index);
    }
  }

  /**
   * The events (encoded) that end the stream for `err` as a refusal, when `err` is a guardrail's block on a begun
   * message. `billed`: the usage the request is billed for, which its message_delta reports whole (a client
   * reconciling usage adds up what it was told, and a translated upstream's input count is known only at its end);
   * without it, the output count last told.
   */
  refused(err: GatewayError, billed?: Usage): string | undefined {
    if (err.code !== "GUARDRAIL_BLOCKED" || !this.begun || this.stopped) return undefined;
    this.stopped = true;
    let text = "";
    for (const [index, type] of this.open) if (CLOSED_ON_REFUSAL.has(type)) text += encode("content_block_stop", { index });
    this.open.clear();
    const index = this.nextIndex++;
    text += encode("content_block_start", { index, content_block: { type: "text", text: "" } });
    text += encode("content_block_delta", { index, delta: { type: "text_delta", text: `[${err.message}]` } });
    text += encode("content_block_stop", { index });
    const stop_details = { type: "refusal", category: null, explanation: err.message };
    text += encode("message_delta", { delta: { stop_reason: "refusal", stop_sequence: null, stop_details }, usage: billed ? messagesUsage(billed) : { output_tokens: this.outputTokens } });
    return text + encode("message_stop", {});
  }
}

/** Blocks whose content_block_stop a refusal sends: the ones a client only shows (never a call it would run). */
const CLOSED_ON_REFUSAL: ReadonlySet<string> = new Set(["text", "thinking", "redacted_thinking"]);

/** `u` as a Messages message_delta's usage (cumulative, as Anthropic's own: the SDKs take each field it names). */
function messagesUsage(u: Usage): Record<string, unknown> {
  return {
    input_tokens: u.inputTokens,
    cache_creation_input_tokens: u.cacheWriteTokens ?? 0,
    cache_read_input_tokens: u.cacheReadTokens ?? 0,
    output_tokens: u.outputTokens,
    ...(u.webSearches ? { server_tool_use: { web_search_requests: u.webSearches } } : {}),
  };
}

const countOf = (v: unknown, was: number): number => (typeof v === "number" && v >= 0 ? v : was);
