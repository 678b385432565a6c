// Messages events: text_delta and input_json_delta per content block index; server tool and MCP results come whole in
// their content_block_start. A block's rest goes out as one more content_block_delta right before its
// content_block_stop. A block of a type the gateway does not know is read whole in its content_block_start, and a
// delta of a type it does not know whole as it comes: such a delta may replace rather than add to its block (a
// compaction_delta carries the whole summary), so none of it is held back or split into more events. The upstream's
// message_delta is held until message_stop, after the answer's verdicts (allow rules, moderation): a block there
// ends the stream with the refusal's message_delta instead (core/http/messages-stream-end.ts), never a second one.
import type { SseEvent } from "../../../core/sse/parse.ts";
import { parseData, type Slots, type StreamAdapter } from "./slots.ts";
import { fixCitation } from "../walk/citations.ts";
import { MESSAGES_CALLS, MESSAGES_SERVER_RESULTS, messagesResultBlock } from "../walk/answer.ts";
import { KNOWN_MESSAGES_BLOCKS, unknownBlockStrings } from "../walk/unknown-blocks.ts";

/** Delta types the gateway knows (thinking and its signature are signed: left as they are). */
const KNOWN_DELTAS: ReadonlySet<string> = new Set(["text_delta", "input_json_delta", "citations_delta", "thinking_delta", "signature_delta"]);
const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object";

export class MessagesStream implements StreamAdapter {
  /** Block index -> the delta type it streams (text_delta or input_json_delta). */
  private readonly kinds = new Map<number, string>();

  /** The upstream's message_delta, sent with message_stop once the answer's verdicts passed. */
  private stop: SseEvent | undefined;

  constructor(private readonly slots: Slots) {}

  isTerminal(ev: SseEvent): boolean {
    return ev.event === "message_stop";
  }

  heldToEnd(): SseEvent[] {
    const stop = this.stop;
    this.stop = undefined;
    return stop ? [stop] : [];
  }

  onEvent(ev: SseEvent): SseEvent[] {
    if (ev.event === "message_delta") {
      this.stop = ev;
      return [];
    }
    if (ev.event === "message_stop") return [...this.heldToEnd(), ev];
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
      else if (isObj(b) && (MESSAGES_SERVER_RESULTS.has(b.type) || b.type === "mcp_tool_result" || !KNOWN_MESSAGES_BLOCKS.has(b.type))) {
        // A server tool's or MCP server's result, or a block of a type the gateway does not know, comes whole here.
        if (this.whole(b, messagesResultBlock)) ev.data = JSON.stringify(e);
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
    } else if (isObj(d) && !KNOWN_DELTAS.has(d.type)) {
      if (this.whole(d, unknownBlockStrings)) ev.data = JSON.stringify(e);
    }
    return [ev];
  }

  /** `o`'s strings, as `read` finds them, judged whole (Slots.whole) and written back. Whether any changed. */
  private whole(o: Record<string, any>, read: (o: Record<string, any>, visit: (t: string) => string) => void): boolean {
    let changed = false;
    read(o, (t) => {
      const out = this.slots.whole(t);
      if (out !== t) changed = true;
      return out;
    });
    return changed;
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
