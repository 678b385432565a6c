// Incremental SSE parser (WHATWG rules): one leading BOM dropped, any of CRLF / LF / CR line endings, possibly split
// across reads, comments ignored, multi-line data joined with "\n", an unterminated event at EOF discarded.
// Hand-written because it sits on the streaming hot path: lines are found with indexOf and `data:` values are
// sliced straight out of the read (no per-line substring, no per-event array); bench/ compares it with
// eventsource-parser in the same run.
// Linear in the bytes read, whatever the upstream sends: only the new read is searched for line ends (the partial
// line carried over is never rescanned), and an event larger than MAX_SSE_EVENT_CHARS fails the stream instead of
// being buffered without bound (issue 25: one 12 MiB line used to stall the whole gateway for seconds).

import { StringDecoder } from "node:string_decoder";
import { answerStarted } from "../net/answer-deadline.ts";

export interface SseEvent {
  /** `event:` field; undefined for the default "message" type. */
  event?: string;
  data: string;
  /**
   * Set on a keep-alive the gateway makes (data empty): written as the SSE comment line `: <comment>`, which clients
   * ignore; never kept for a replay.
   */
  comment?: string;
}

/**
 * The largest event (all its lines) accepted from an upstream, in characters. The largest legitimate events are
 * whole answers carrying base64 media — a Gemini image model's inline PNG, a Responses `response.completed` with an
 * image_generation result — a few MiB each; 16 MiB leaves room for those and matches the Bedrock event-stream frame
 * limit (providers/bedrock/eventstream.ts), while bounding what one stream can hold in memory.
 */
export const MAX_SSE_EVENT_CHARS = 16 * 1024 * 1024;

/** The upstream sent an event (or a line) past the limit: the stream cannot go on. */
export class SseEventTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`stream event larger than ${limit} characters`);
    this.name = "SseEventTooLargeError";
  }
}

export class SseParser {
  /** The partial line carried over from earlier reads (it holds no line end; never searched again). */
  private buf = "";
  private data: string | undefined;
  private event: string | undefined;
  private sawCR = false;
  /** Nothing of the stream read yet: a leading BOM (U+FEFF) is still to be dropped. */
  private atStart = true;
  // Node's StringDecoder: ~2.5x faster than TextDecoder on small reads, and keeps split UTF-8 sequences too.
  private readonly decoder = new StringDecoder("utf8");

  constructor(private readonly maxEventChars = MAX_SSE_EVENT_CHARS) {}

  /** Feed bytes (or text); returns the events completed by this chunk. */
  push(chunk: Uint8Array | string): SseEvent[] {
    let text = typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    // WHATWG: one leading BOM is not part of the stream (kept, it made the first line's field "\uFEFFdata": that
    // event was lost). A BOM cut across reads decodes to "" first: the flag waits for the first character.
    if (this.atStart && text.length) {
      this.atStart = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    // A CR at the end of the previous chunk was a line end; drop the LF that completes its CRLF.
    if (this.sawCR) {
      this.sawCR = false;
      if (text.charCodeAt(0) === 10) text = text.slice(1);
    }
    const out: SseEvent[] = [];
    // The carried-over partial line never holds a line end, so one look at the new text picks the path.
    const noCR = text.indexOf("\r") === -1;
    const firstLF = noCR ? text.indexOf("\n") : 0;
    if (firstLF === -1) {
      // Still inside one line: keep it (a rope append, O(read)) and search nothing but the next read.
      this.buf = this.buf.length ? this.buf + text : text;
      this.bound(this.buf.length);
      return out;
    }
    const from = this.buf.length;
    const s = from ? this.buf + text : text;
    const len = s.length;
    let start = 0;
    if (noCR) {
      for (let nl = from + firstLF; nl !== -1; nl = s.indexOf("\n", start)) {
        this.line(s, start, nl, out);
        start = nl + 1;
      }
    } else {
      let lf = s.indexOf("\n", from);
      let cr = s.indexOf("\r", from);
      while (lf !== -1 || cr !== -1) {
        let end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
        this.line(s, start, end, out);
        if (end === cr) {
          if (end + 1 === len) this.sawCR = true;
          else if (lf === end + 1) end++;
        }
        start = end + 1;
        if (lf !== -1 && lf < start) lf = s.indexOf("\n", start);
        if (cr !== -1 && cr < start) cr = s.indexOf("\r", start);
      }
    }
    this.buf = start < len ? s.slice(start) : "";
    if (this.buf.length) this.bound(this.buf.length);
    return out;
  }

  /** Throws once the event being read (its data so far plus `partial` characters of line) is over the limit. */
  private bound(partial: number): void {
    if (partial + (this.data === undefined ? 0 : this.data.length) > this.maxEventChars) throw new SseEventTooLargeError(this.maxEventChars);
  }

  /** One line, s[start, end): a field, a comment, or the blank line that dispatches the event. */
  private line(s: string, start: number, end: number, out: SseEvent[]): void {
    if (end - start > this.maxEventChars) throw new SseEventTooLargeError(this.maxEventChars);
    if (start === end) {
      if (this.data !== undefined) {
        out.push(this.event === undefined ? { data: this.data } : { event: this.event, data: this.data });
        this.data = undefined;
      }
      this.event = undefined;
      return;
    }
    const c = s.charCodeAt(start);
    if (c === 58) return; // ":" comment
    // Fast path for the line every chunk has.
    if (c === 100 && end - start >= 5 && s.charCodeAt(start + 4) === 58 && s.startsWith("data", start)) {
      const v = s.charCodeAt(start + 5) === 32 && start + 5 < end ? start + 6 : start + 5;
      this.addData(s.slice(v, end));
      return;
    }
    const colon = s.indexOf(":", start);
    const hasValue = colon !== -1 && colon < end;
    const field = s.slice(start, hasValue ? colon : end);
    let value = "";
    if (hasValue) value = s.slice(s.charCodeAt(colon + 1) === 32 && colon + 1 < end ? colon + 2 : colon + 1, end);
    if (field === "data") this.addData(value);
    else if (field === "event") this.event = value;
    // id / retry / unknown fields: not needed by any upstream protocol we speak.
  }

  private addData(v: string): void {
    this.data = this.data === undefined ? v : `${this.data}\n${v}`;
    if (this.data.length > this.maxEventChars) throw new SseEventTooLargeError(this.maxEventChars);
  }
}

/** A body's own event bound (server.upstream_limits.event_chars): a property of the body, as its answer deadline is. */
const EVENT_LIMIT = Symbol("event limit");
type Limited = { [EVENT_LIMIT]?: number };

/** Bounds the events parsed from `body` (its upstream client's setting) at `chars` rather than the default. */
export function limitEvents(body: object, chars: number): void {
  (body as Limited)[EVENT_LIMIT] = chars;
}

/** The largest event a parser of `body` accepts. */
export function eventLimitOf(body: object): number {
  return (body as Limited)[EVENT_LIMIT] ?? MAX_SSE_EVENT_CHARS;
}

/** Parse a whole byte stream into events. */
export async function* parseSse(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const parser = new SseParser(eventLimitOf(body));
  let started = false;
  for await (const chunk of body) {
    const events = parser.push(chunk);
    // The first event (comments are not one) ends the wait for the answer to start (core/net/answer-deadline.ts).
    if (!started && events.length) {
      started = true;
      answerStarted(body);
    }
    for (let i = 0; i < events.length; i++) yield events[i]!;
  }
}
