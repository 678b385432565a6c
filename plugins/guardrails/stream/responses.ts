// Responses events: output_text and refusal deltas per (item, content part); function-call and MCP call argument,
// custom tool call input and code interpreter code deltas per item.
// A slot's rest goes out as one more delta right before its .done event (every slot's before the upstream's `error`
// event); the .done events, content_part.done, output_item.added/.done and the terminal response carry the whole
// text, which is checked and restored as a JSON answer's; the instructions the events carrying the response echo are
// restored.
// Inserted events take the next sequence_number and every later event is renumbered, so the numbers stay consecutive;
// so does the gateway's `error` event after a failure (numbered after the last event this stage sent).
// A response.output_text.annotation.added (a url_citation, indexing into its part's text as the upstream wrote it)
// waits until the text it cites went out, then follows the delta that sent it (or the part's rest, before its .done),
// moved to where that text is in what the client got; the parts, items and response carrying annotations whole have
// them moved along with their text's edits.
import type { SseEvent } from "../../../core/sse/parse.ts";
import { responsesEchoed, responsesItem, responsesPart } from "../walk/answer.ts";
import { visitJsonString } from "../walk/json-text.ts";
import { parseData, type Slots, type StreamAdapter } from "./slots.ts";
import { citedEnd, citedOutput } from "../moves.ts";
import { setNextSequence } from "../../../core/sse/next-sequence.ts";

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

type Kind = "output_text" | "refusal" | "arguments" | "input" | "mcp_arguments" | "code";

/** Per slot kind: the event its fragments come in (its .done event is named the same way). */
const DELTA: Record<Kind, string> = {
  output_text: "response.output_text.delta",
  refusal: "response.refusal.delta",
  arguments: "response.function_call_arguments.delta",
  input: "response.custom_tool_call_input.delta",
  mcp_arguments: "response.mcp_call_arguments.delta",
  code: "response.code_interpreter_call_code.delta",
};
/** Kinds whose text is JSON (checked as it decodes). */
const JSON_KINDS = new Set<Kind>(["arguments", "mcp_arguments"]);
const KIND_OF_DELTA = new Map(Object.entries(DELTA).map(([k, t]) => [t, k as Kind]));
const KIND_OF_DONE = new Map(Object.entries(DELTA).map(([k, t]) => [t.replace(/\.delta$/, ".done"), k as Kind]));
/** The field of a kind's .done event that carries the whole text. */
const DONE_FIELD: Record<Kind, string> = { output_text: "text", refusal: "refusal", arguments: "arguments", input: "input", mcp_arguments: "arguments", code: "code" };

interface SlotInfo {
  kind: Kind;
  at: Record<string, unknown>;
}

export class ResponsesStream implements StreamAdapter {
  /** Events inserted so far: added to every later sequence_number. */
  private shift = 0;
  /** The last sequence_number sent; an inserted event takes the next one. */
  private seq = -1;
  private readonly info = new Map<string, SlotInfo>();
  /** Per output_text slot: annotation.added events waiting for the text they cite, in order. */
  private readonly held = new Map<string, any[]>();
  /** Per output_text slot: annotations taken out so far (their urls could not be given without a secret). */
  private readonly removed = new Map<string, number>();

  constructor(private readonly slots: Slots) {}

  isTerminal(ev: SseEvent): boolean {
    return ev.event !== undefined && TERMINAL.has(ev.event);
  }

  onEvent(ev: SseEvent): SseEvent[] {
    const e = parseData(ev);
    if (!e || typeof e.type !== "string") return [ev];
    let changed = false;
    const before: SseEvent[] = [];
    const whole = (s: string) => this.slots.run.output(s);
    const cited = (s: string, annotations: unknown) => citedOutput(s, annotations, (t, moves) => this.slots.run.output(t, moves));
    let released: string | undefined;
    switch (e.type) {
      case "response.output_text.delta":
      case "response.refusal.delta":
      case "response.function_call_arguments.delta":
      case "response.custom_tool_call_input.delta":
      case "response.mcp_call_arguments.delta":
      case "response.code_interpreter_call_code.delta": {
        if (typeof e.delta !== "string" || !e.delta) break;
        const kind = KIND_OF_DELTA.get(e.type)!;
        const key = this.key(e);
        if (!this.info.has(key)) this.info.set(key, { kind, at: this.at(e) });
        const out = this.slots.push(key, e.delta, JSON_KINDS.has(kind));
        if (out !== e.delta) (e.delta = out), (changed = true);
        released = key;
        break;
      }
      case "response.output_text.annotation.added": {
        const key = this.key(e);
        const held = this.held.get(key);
        // Behind the others held, or until its text went out: sent later, numbered then.
        if (held || this.slots.holds(key, citedEnd([e.annotation]))) {
          if (held) held.push(e);
          else this.held.set(key, [e]);
          this.shift--;
          return [];
        }
        if (this.cite(key, e)) {
          this.shift--;
          return [];
        }
        changed = true;
        break;
      }
      case "response.output_text.done":
      case "response.refusal.done":
      case "response.function_call_arguments.done":
      case "response.custom_tool_call_input.done":
      case "response.mcp_call_arguments.done":
      case "response.code_interpreter_call_code.done": {
        const rest = this.endSlot(this.key(e));
        if (rest) before.push(rest);
        before.push(...this.release(this.key(e), true));
        const field = DONE_FIELD[KIND_OF_DONE.get(e.type)!];
        if (typeof e[field] === "string") {
          const out = field === "arguments" ? visitJsonString(e[field], whole) : whole(e[field]);
          if (out !== e[field]) (e[field] = out), (changed = true);
        }
        break;
      }
      // The upstream's failure (response.failed follows): text still held goes out first, as it would before
      // response.failed (a client such as the openai SDK stops reading at this event).
      case "error":
        before.push(...this.flush());
        break;
      case "response.content_part.done":
        responsesPart(e.part, whole, cited);
        changed = true;
        break;
      // A hosted call (shell, web search, MCP, ...) can come whole in .added, long before its .done.
      case "response.output_item.added":
      case "response.output_item.done":
        responsesItem(e.item, whole, cited);
        changed = true;
        break;
      default:
        if (TERMINAL.has(e.type) && Array.isArray(e.response?.output)) {
          for (const it of e.response.output) responsesItem(it, whole, cited);
          changed = true;
        }
    }
    // response.created, in_progress and the terminal one echo the request's instructions, which left redacted.
    if (responsesEchoed(e.response, (t) => this.slots.run.restore(t))) changed = true;
    // Numbered after what was inserted before it (and all that was inserted earlier).
    if (typeof e.sequence_number === "number") {
      if (this.shift) (e.sequence_number += this.shift), (changed = true);
      this.seq = e.sequence_number;
    }
    if (changed) ev.data = JSON.stringify(e);
    return [...before, ev, ...(released ? this.release(released, false) : [])];
  }

  /** Slot `key`'s held annotation events, moved and numbered, once its text up to theirs went out (or `all`). */
  private release(key: string, all: boolean): SseEvent[] {
    const held = this.held.get(key);
    if (!held || (!all && this.slots.holds(key, citedEnd(held.map((h) => h.annotation))))) return [];
    this.held.delete(key);
    return held.flatMap((h) => {
      if (this.cite(key, h)) return [];
      this.shift++;
      h.sequence_number = ++this.seq;
      return [{ event: h.type, data: JSON.stringify(h) }];
    });
  }

  /**
   * An annotation.added event's annotation moved and checked (Slots.moveCited): true when it is taken out (its url
   * cannot be given), and the part's later annotations numbered without it, as the final response's list is.
   */
  private cite(key: string, e: any): boolean {
    if (this.slots.moveCited(key, [e.annotation])) {
      this.removed.set(key, (this.removed.get(key) ?? 0) + 1);
      return true;
    }
    const removed = this.removed.get(key);
    if (removed && typeof e.annotation_index === "number") e.annotation_index -= removed;
    return false;
  }

  private key(e: any): string {
    return `${e.item_id ?? e.output_index}:${e.content_index ?? ""}`;
  }

  private at(e: any): Record<string, unknown> {
    const at: Record<string, unknown> = { item_id: e.item_id, output_index: e.output_index };
    if (e.content_index !== undefined) at.content_index = e.content_index;
    return at;
  }

  /** The slot's rest as one more delta event (numbered), or undefined when it has none. */
  private endSlot(key: string): SseEvent | undefined {
    const rest = this.slots.end(key);
    const info = this.info.get(key);
    this.info.delete(key);
    if (!rest || !info) return undefined;
    const type = DELTA[info.kind];
    this.shift++;
    const seq = ++this.seq;
    return { event: type, data: JSON.stringify({ type, sequence_number: seq, ...info.at, delta: rest }) };
  }

  /** The stream failed after what was sent: its error event takes the number after the last one sent. */
  failed(err: unknown): void {
    // This stage renumbers, so the gateway's error event continues its numbers, not the translator's or relay's.
    if (this.seq >= 0) setNextSequence(err, this.seq + 1);
  }

  flush(): SseEvent[] {
    const out: SseEvent[] = [];
    for (const key of this.slots.keys()) {
      const ev = this.endSlot(key);
      if (ev) out.push(ev);
      out.push(...this.release(key, true));
    }
    for (const key of [...this.held.keys()]) out.push(...this.release(key, true));
    return out;
  }
}
