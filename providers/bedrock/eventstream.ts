// AWS event-stream framing (application/vnd.amazon.eventstream, reference §2.5), decoded incrementally: TCP reads
// cut frames anywhere, so bytes are buffered until a whole frame (its total_len) is there, and one read may hold
// several frames. @smithy/eventstream-codec decodes each whole frame and checks both CRC-32s; it is imported with the
// first Bedrock stream, not with the gateway (a gateway without Bedrock providers never loads the AWS packages).
import type { EventStreamCodec, Message } from "@smithy/eventstream-codec";
import { answerStarted } from "../../core/net/answer-deadline.ts";

/** Frames above this are not Bedrock's (its largest are a few KB): refuse rather than buffer without bound. */
const MAX_FRAME = 16 * 1024 * 1024;
/** total_len (4) + headers_len (4) + prelude CRC (4) + message CRC (4). */
const MIN_FRAME = 16;

let codecLoad: Promise<EventStreamCodec> | undefined;

/** The codec, imported on first use. */
export function eventStreamCodec(): Promise<EventStreamCodec> {
  return (codecLoad ??= Promise.all([import("@smithy/eventstream-codec"), import("@smithy/util-utf8")])
    .then(([{ EventStreamCodec }, { fromUtf8, toUtf8 }]) => new EventStreamCodec(toUtf8, fromUtf8)));
}

export class EventStreamFramingError extends Error {}

export class EventStreamDecoder {
  constructor(private readonly codec: EventStreamCodec) {}

  /**
   * The unfinished frame's bytes, as read. They are joined once, when the frame is whole: joining them on every
   * read copied the whole partial frame each time, quadratic in a large frame (issue 25).
   */
  private parts: Uint8Array[] = [];
  private held = 0;
  /** The unfinished frame's total_len, once its first 4 bytes are here (0 before). */
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
      if (this.need === 0 && this.held >= 4) {
        if (this.parts[0]!.length < 4) this.parts = [concat(this.parts, this.held)];
        this.need = frameLength(this.parts[0]!);
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
        const total = frameLength(buf);
        if (buf.length < total) break;
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
      this.need = buf.length >= 4 ? frameLength(buf) : 0;
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
}

/** A frame's total_len (its first 4 bytes), refused outside what a frame can be — before any of it is buffered. */
function frameLength(buf: Uint8Array): number {
  const total = new DataView(buf.buffer, buf.byteOffset, 4).getUint32(0, false);
  if (total < MIN_FRAME || total > MAX_FRAME) throw new EventStreamFramingError(`event-stream frame length ${total} is out of range`);
  return total;
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

/** Frames from a response body, as they complete. */
export async function* decodeFrames(body: AsyncIterable<Uint8Array>): AsyncGenerator<BedrockFrame> {
  const dec = new EventStreamDecoder(await eventStreamCodec());
  let started = false;
  for await (const chunk of body) {
    const frames = dec.push(chunk);
    if (!started && frames.length) {
      started = true;
      answerStarted(body); // the answer deadline (server.upstream_answer_timeout_ms) bounded only the wait for this
    }
    for (let i = 0; i < frames.length; i++) yield toFrame(frames[i]!);
    dec.check();
  }
  dec.end();
}
