// The slots of one stream, by key (a choice, a content block, an output item's part, a tool call), and what a
// protocol's adapter implements to run the guardrails over its events.
import type { SseEvent } from "../../../core/sse/parse.ts";
import type { GuardRun } from "../check.ts";
import { SlotText } from "./slot.ts";
import { moveUrlCitations } from "../moves.ts";
import { checkUrlCitationSources } from "../walk/url-citation-sources.ts";

/** The most answer text kept for moderating the answer (past it the rest goes unchecked by the moderation model). */
export const MAX_MODERATED_CHARS = 64_000;

export class Slots {
  private readonly map = new Map<string, SlotText>();
  /** Ended slots whose text the guardrails changed: annotations may still cite it (chat sends them at the end). */
  private readonly ended = new Map<string, SlotText>();
  /** The answer's raw text (placeholders unrestored), kept only when the answer is moderated. */
  answer = "";
  /** A block rule cut the stream: flush() now carries only the text before the match, then the error follows. */
  cutShort = false;

  constructor(readonly run: GuardRun, private readonly keepAnswer: boolean) {}

  push(key: string, delta: string, json = false): string {
    this.keep(delta);
    let s = this.map.get(key);
    if (!s) this.map.set(key, (s = new SlotText(this.run, json)));
    try {
      return s.push(delta);
    } catch (e) {
      this.cutBy(key, s);
      throw e;
    }
  }

  /**
   * A block rule cut slot `key`: it alone is left open, holding the text before the match, so the adapter's flush()
   * sends that (in the slot's own shape) before the error. The other slots' held text goes unsent.
   */
  private cutBy(key: string, s: SlotText): void {
    if (!s.cut) return;
    this.map.clear();
    this.map.set(key, s);
    this.cutShort = true;
  }

  /**
   * Answer text that comes whole in one event, not as a slot's deltas (a server tool's result, a block or delta of a
   * type the gateway does not know): kept for moderation, output rules over it alone, placeholders restored.
   */
  whole(text: string): string {
    this.keep(text);
    return this.run.output(text);
  }

  private keep(text: string): void {
    if (this.keepAnswer && this.answer.length < MAX_MODERATED_CHARS) this.answer += text.slice(0, MAX_MODERATED_CHARS - this.answer.length);
  }

  /** The rest of one slot ("" when it has none or never existed); the slot is gone afterwards. */
  end(key: string): string {
    const s = this.map.get(key);
    if (!s) return "";
    this.map.delete(key);
    try {
      const rest = s.end();
      if (s.moves.size) this.ended.set(key, s);
      return rest;
    } catch (e) {
      this.cutBy(key, s);
      throw e;
    }
  }

  /** Slot `key`, open or ended (an ended one only when its text was changed), for annotations citing its text. */
  text(key: string): SlotText | undefined {
    return this.map.get(key) ?? this.ended.get(key);
  }

  /** Whether slot `key` is open and has not yet sent its text up to `end` (annotations citing it wait). */
  holds(key: string, end: number): boolean {
    const s = this.map.get(key);
    return s !== undefined && !s.covers(end);
  }

  /**
   * `annotations` (url_citation, in place) moved to where the text they cite is in what slot `key` sent, their titles
   * and urls through the output rules (throws GUARDRAIL_BLOCKED) with placeholders restored; one whose url can no
   * longer be given is removed from the array. How many were removed.
   */
  moveCited(key: string, annotations: unknown): number {
    const s = this.text(key);
    if (s) moveUrlCitations(annotations, (p, isEnd) => s.move(p, isEnd));
    return checkUrlCitationSources(annotations, (t) => this.run.output(t));
  }

  /** Keys still open, in the order they opened. */
  keys(): string[] {
    return [...this.map.keys()];
  }
}

export interface StreamAdapter {
  /** The events to send for this one (usually itself, edited in place), in order. Throws GUARDRAIL_BLOCKED. */
  onEvent(ev: SseEvent): SseEvent[];
  /** This event ends the answer ([DONE], message_stop, response.completed): slots flush and verdicts run before it. */
  isTerminal(ev: SseEvent): boolean;
  /** Events carrying the text every open slot still holds. */
  flush(): SseEvent[];
  /** Events held until the answer's verdicts passed, for a stream that ends without its terminal event. */
  heldToEnd?(): SseEvent[];
  /** The stream failed with `err` after the events this adapter sent: what the error carries about them is made its. */
  failed?(err: unknown): void;
}

/** Parse an event's JSON data; undefined for what is not an object (left as it is). */
export function parseData(ev: SseEvent): any {
  const d = ev.data;
  if (d.charCodeAt(0) !== 123) return undefined;
  try {
    return JSON.parse(d);
  } catch {
    return undefined;
  }
}
