// AWS event-stream framing (application/vnd.amazon.eventstream, reference §2.5), decoded incrementally: TCP reads
// cut frames anywhere, so bytes are buffered until a whole frame (its total_len) is there, and one read may hold
// several frames. @smithy/eventstream-codec decodes each whole frame and checks both CRC-32s; it is imported with the
// first Bedrock stream, not with the gateway (a gateway without Bedrock providers never loads the AWS packages).
// A frame is one stream event, so it is held to the event bound (server.upstream_limits.event_chars, in bytes here),
// found from its prelude before any of it is held: past it, a frame whose prelude checks out is an answer too large
// (EventStreamFrameTooLargeError: the same request would send it again), not a corrupt stream.
import { crc32 } from "node:zlib";
import type { EventStreamCodec, Message } from "@smithy/eventstream-codec";
import { answerStarted } from "../../core/net/answer-deadline.ts";
import { eventLimitOf, MAX_SSE_EVENT_CHARS } from "../../core/sse/parse.ts";

/** total_len (4) + headers_len (4) + prelude CRC (4) + message CRC (4). */
const MIN_FRAME = 16;
/** total_len, headers_len and their CRC. */
const PRELUDE = 12;
/**
 * The largest event bound a setting can give (event_chars' maximum in schemas/gateway.schema.json, the longest string
 * the runtime holds): a total_len past it is no frame any configuration could take, so it is corruption.
 */
export const LONGEST_FRAME = 536_870_888;

let codecLoad: Promise<EventStreamCodec> | undefined;

/** The codec, imported on first use. */
export function eventStreamCodec(): Promise<EventStreamCodec> {
  return (codecLoad ??= Promise.all([import("@smithy/eventstream-codec"), import("@smithy/util-utf8")])
    .then(([{ EventStreamCodec }, { fromUtf8, toUtf8 }]) => new EventStreamCodec(toUtf8, fromUtf8)));
}

export class EventStreamFramingError extends Error {}

/** A well-formed frame (its prelude checks out) longer than the event bound: refused, never held. */
export class EventStreamFrameTooLargeError extends EventStreamFramingError {
  constructor(readonly length: number, readonly limit: number) {
    super(`event-stream frame of ${length} bytes is past the bound of ${limit}`);
  }
}

export class EventStreamDecoder {
  /** `maxFrame`: the event bound (server.upstream_limits.event_chars), in bytes of a whole frame. */
  constructor(private readonly codec: EventStreamCodec, private readonly maxFrame = MAX_SSE_EVENT_CHARS) {}

  /**
   * The unfinished frame's bytes, as read. They are joined once, when the frame is whole: joining them on every
   * read copied the whole partial frame each time, quadratic in a large frame (issue 25).
   */
  private parts: Uint8Array[] = [];
  private held = 0;
  /** The unfinished frame's total_len, once enough of its prelude is here to accept it (0 before). */
  private need = 0;
  /** A bad frame found after good ones in the same read: those are handed out first, then this is thrown. */
  private pending: EventStreamFramingError | undefined;

  /**
   * Feed one read; returns the frames it completed, in order. Throws on a CRC mismatch or a bad length — once the
   * frames before the bad one have been returned (the next push() or end() throws).
   */
  push(chunk: Uint8Array): Message[] {
    this.check();
    let buf = chunk;
    if (this.held) {
      this.parts.push(chunk);
      this.held += chunk.length;
      if (this.need === 0) {
        // The prelude in one piece (at most its 12 bytes are wanted; joined only while the first read is shorter).
        if (this.parts[0]!.length < Math.min(this.held, PRELUDE)) this.parts = [concat(this.parts, this.held)];
        this.need = this.frameLength(this.parts[0]!);
      }
      if (this.need === 0 || this.held < this.need) return [];
      buf = concat(this.parts, this.held);
      this.parts = [];
      this.held = 0;
      this.need = 0;
    }
    const out: Message[] = [];
    try {
      while (buf.length >= 4) {
        const total = this.frameLength(buf);
        if (total === 0 || buf.length < total) break;
        try {
          out.push(this.codec.decode(buf.subarray(0, total)));
        } catch (err) {
          throw new EventStreamFramingError(`bad event-stream frame: ${(err as Error).message}`);
        }
        buf = buf.subarray(total);
      }
    } catch (err) {
      if (!out.length) throw err;
      this.pending = err as EventStreamFramingError;
      buf = new Uint8Array(0);
    }
    // Keep only the unfinished tail (copied, so the read it came from can be collected).
    if (buf.length) {
      this.parts = [buf.slice()];
      this.held = buf.length;
      this.need = this.frameLength(buf);
    }
    return out;
  }

  /** Throws the framing error found behind the frames last returned, if any. */
  check(): void {
    if (this.pending) throw this.pending;
  }

  /** EOF: bytes left over are a frame cut short. */
  end(): void {
    this.check();
    if (this.held) throw new EventStreamFramingError(`event-stream ended inside a frame (${this.held} bytes left)`);
  }

  /**
   * A frame's total_len, or 0 while too little of its prelude is here to accept it; thrown before any of the frame
   * is held: a length no frame can have (from its first 4 bytes), or one past the bound — a too-large frame when
   * its prelude's CRC holds, else a corrupt one (a garbled length is no reason to raise a setting).
   */
  private frameLength(buf: Uint8Array): number {
    if (buf.length < 4) return 0;
    const view = new DataView(buf.buffer, buf.byteOffset, Math.min(buf.length, PRELUDE));
    const total = view.getUint32(0, false);
    if (total < MIN_FRAME || total > LONGEST_FRAME) throw new EventStreamFramingError(`event-stream frame length ${total} is out of range`);
    if (total <= this.maxFrame) return total;
    if (buf.length < PRELUDE) return 0;
    if (crc32(buf.subarray(0, 8)) !== view.getUint32(8, false)) throw new EventStreamFramingError(`event-stream frame prelude checksum mismatch (total_len ${total})`);
    throw new EventStreamFrameTooLargeError(total, this.maxFrame);
  }
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** One decoded Bedrock frame: its type headers and the JSON payload as text. */
export interface BedrockFrame {
  messageType: string;
  /** :event-type, :exception-type or :error-code, by message type. */
  type: string;
  payload: string;
  /** :error-message of an `error` frame. */
  errorMessage?: string;
}

const str = (m: Message, name: string): string | undefined => {
  const h = m.headers[name];
  return h && h.type === "string" ? h.value : undefined;
};

export function toFrame(m: Message): BedrockFrame {
  const messageType = str(m, ":message-type") ?? "event";
  const type = (messageType === "event" ? str(m, ":event-type") : messageType === "exception" ? str(m, ":exception-type") : str(m, ":error-code")) ?? "";
  const frame: BedrockFrame = { messageType, type, payload: Buffer.from(m.body.buffer, m.body.byteOffset, m.body.byteLength).toString("utf8") };
  if (messageType === "error") frame.errorMessage = str(m, ":error-message");
  return frame;
}

/** Frames from a response body, as they complete, within its upstream client's event bound. */
export async function* decodeFrames(body: AsyncIterable<Uint8Array>): AsyncGenerator<BedrockFrame> {
  for await (const read of decodeFrameReads(body)) for (let i = 0; i < read.length; i++) yield read[i]!;
}

/**
 * The same, grouped by the read they completed in (reads that complete none are skipped): a relay notes a whole
 * read's usage before handing on its first event (providers/sse-reads.ts says why).
 */
export async function* decodeFrameReads(body: AsyncIterable<Uint8Array>): AsyncGenerator<BedrockFrame[]> {
  const dec = new EventStreamDecoder(await eventStreamCodec(), eventLimitOf(body));
  let started = false;
  for await (const chunk of body) {
    const frames = dec.push(chunk);
    if (frames.length) {
      if (!started) {
        started = true;
        answerStarted(body); // the answer deadline (server.upstream_answer_timeout_ms) bounded only the wait for this
      }
      yield frames.map(toFrame);
    }
    dec.check();
  }
  dec.end();
}
