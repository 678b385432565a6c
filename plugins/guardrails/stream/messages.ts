// Messages events: text_delta and input_json_delta per content block index; server tool and MCP results come whole in
// their content_block_start. A block's rest goes out as one more content_block_delta right before its
// content_block_stop.
import type { SseEvent } from "../../../core/sse/parse.ts";
import { parseData, type Slots, type StreamAdapter } from "./slots.ts";
import { fixCitation } from "../walk/citations.ts";
import { MESSAGES_CALLS, MESSAGES_SERVER_RESULTS, messagesResultBlock } from "../walk/answer.ts";

export class MessagesStream implements StreamAdapter {
  /** Block index -> the delta type it streams (text_delta or input_json_delta). */
  private readonly kinds = new Map<number, string>();

  constructor(private readonly slots: Slots) {}

  isTerminal(ev: SseEvent): boolean {
    return ev.event === "message_stop";
  }

  onEvent(ev: SseEvent): SseEvent[] {
    if (ev.event !== "content_block_delta" && ev.event !== "content_block_stop" && ev.event !== "content_block_start") return [ev];
    const e = parseData(ev);
    if (!e || typeof e.index !== "number") return [ev];
    if (ev.event === "content_block_start") {
      const b = e.content_block;
      if (b?.type === "text") {
        this.kinds.set(e.index, "text_delta");
        if (typeof b.text === "string" && b.text) {
          b.text = this.slots.push(`b${e.index}`, b.text);
          ev.data = JSON.stringify(e);
        }
        if (Array.isArray(b.citations) && b.citations.length) {
          for (const c of b.citations) fixCitation(c, this.slots.run);
          ev.data = JSON.stringify(e);
        }
      } else if (MESSAGES_CALLS.has(b?.type)) this.kinds.set(e.index, "input_json_delta");
      else if (MESSAGES_SERVER_RESULTS.has(b?.type) || b?.type === "mcp_tool_result") {
        // A server tool's or MCP server's result comes whole in its start event.
        messagesResultBlock(b, (t) => this.slots.run.output(t));
        ev.data = JSON.stringify(e);
      }
      return [ev];
    }
    if (ev.event === "content_block_stop") {
      const rest = this.slots.end(`b${e.index}`);
      return rest ? [this.delta(e.index, rest), ev] : [ev];
    }
    const d = e.delta;
    // A citation into a redacted document: placeholders restored, char indices mapped to the client's text.
    if (d?.type === "citations_delta") {
      fixCitation(d.citation, this.slots.run);
      ev.data = JSON.stringify(e);
    } else if (d?.type === "text_delta" && typeof d.text === "string" && d.text) {
      const out = this.slots.push(`b${e.index}`, d.text);
      if (out !== d.text) (d.text = out), (ev.data = JSON.stringify(e));
    } else if (d?.type === "input_json_delta" && typeof d.partial_json === "string" && d.partial_json) {
      const out = this.slots.push(`b${e.index}`, d.partial_json, true);
      if (out !== d.partial_json) (d.partial_json = out), (ev.data = JSON.stringify(e));
    }
    return [ev];
  }

  private delta(index: number, text: string): SseEvent {
    const kind = this.kinds.get(index) ?? "text_delta";
    const delta = kind === "input_json_delta" ? { type: kind, partial_json: text } : { type: "text_delta", text };
    return { event: "content_block_delta", data: JSON.stringify({ type: "content_block_delta", index, delta }) };
  }

  flush(): SseEvent[] {
    const out: SseEvent[] = [];
    for (const key of this.slots.keys()) {
      const index = Number(key.slice(1));
      const rest = this.slots.end(key);
      if (rest) out.push(this.delta(index, rest));
    }
    return out;
  }
}
