import { describe, expect, it, vi } from "vitest";
import { fromUtf8 } from "@smithy/util-utf8";
import { readFileSync } from "node:fs";
import { crc32 } from "node:zlib";
import { decodeFrames, EventStreamDecoder, EventStreamFrameTooLargeError, EventStreamFramingError, eventStreamCodec, LONGEST_FRAME, toFrame } from "./eventstream.ts";
import { limitEvents } from "../../core/sse/parse.ts";

const codec = await eventStreamCodec();

// Reference protocols-2 §2.5: the 118-byte messageStart frame, byte-identical to @smithy/eventstream-codec's encode.
const VECTOR = Buffer.from(
  "00000076" + "00000052" + "96d5fade"
  + "0b3a6576656e742d74797065" + "07000c6d6573736167655374617274"
  + "0d3a636f6e74656e742d74797065" + "0700106170706c69636174696f6e2f6a736f6e"
  + "0d3a6d6573736167652d74797065" + "0700056576656e74"
  + "7b22726f6c65223a22617373697374616e74227d" + "6fa8c599", "hex");

const ev = (type: string, payload: unknown) => codec.encode({
  headers: { ":event-type": { type: "string", value: type }, ":content-type": { type: "string", value: "application/json" }, ":message-type": { type: "string", value: "event" } },
  body: fromUtf8(JSON.stringify(payload)),
});

describe("EventStreamDecoder", () => {
  it("decodes the reference vector", () => {
    const frames = new EventStreamDecoder(codec).push(VECTOR).map(toFrame);
    expect(frames).toEqual([{ messageType: "event", type: "messageStart", payload: '{"role":"assistant"}' }]);
  });

  it("a frame split across reads at every byte, and several frames in one read", () => {
    const all = Buffer.concat([VECTOR, ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "héllo" } }), ev("messageStop", { stopReason: "end_turn" })]);
    for (const size of [1, 3, 17, 118, 119, all.length]) {
      const dec = new EventStreamDecoder(codec);
      const got: string[] = [];
      for (let i = 0; i < all.length; i += size) for (const m of dec.push(all.subarray(i, i + size))) got.push(toFrame(m).type);
      dec.end();
      expect(got, `reads of ${size} bytes`).toEqual(["messageStart", "contentBlockDelta", "messageStop"]);
    }
  });

  it("a CRC mismatch (payload or prelude) is a framing error", () => {
    const bad = Buffer.from(VECTOR);
    bad[bad.length - 6] ^= 1;
    expect(() => new EventStreamDecoder(codec).push(bad)).toThrow(EventStreamFramingError);
    const badPrelude = Buffer.from(VECTOR);
    badPrelude[9] ^= 1;
    expect(() => new EventStreamDecoder(codec).push(badPrelude)).toThrow(/checksum|frame/i);
  });

  it("frames before a bad one in the same read are returned first; the error follows", () => {
    const bad = Buffer.from(VECTOR);
    bad[bad.length - 6] ^= 1;
    const dec = new EventStreamDecoder(codec);
    expect(dec.push(Buffer.concat([VECTOR, VECTOR, bad])).length).toBe(2);
    expect(() => dec.check()).toThrow(/message checksum/);
    expect(() => dec.push(VECTOR)).toThrow(EventStreamFramingError);
  });

  it("a stream ending inside a frame is an error, not a silent end", async () => {
    async function* body() { yield VECTOR.subarray(0, 50); }
    const it = decodeFrames(body());
    await expect(it.next()).rejects.toThrow(/ended inside a frame \(50 bytes left\)/);
  });

  it("exception frames keep their type and payload", () => {
    const f = codec.encode({
      headers: { ":exception-type": { type: "string", value: "modelStreamErrorException" }, ":content-type": { type: "string", value: "application/json" }, ":message-type": { type: "string", value: "exception" } },
      body: fromUtf8('{"message":"boom"}'),
    });
    expect(toFrame(new EventStreamDecoder(codec).push(f)[0]!)).toEqual({ messageType: "exception", type: "modelStreamErrorException", payload: '{"message":"boom"}' });
  });

  it("a large frame in small reads is joined once, not copied on every read (issue 25)", () => {
    // Copying the partial frame on each read is quadratic: 1 MiB in 1 KiB reads moved ~512 MiB, a 16 MiB frame
    // ~128 GiB (the event loop stalled for minutes). Joined once, the bytes copied stay a small multiple of the frame.
    const size = 1024 * 1024;
    const big = ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "a".repeat(size) } });
    const typed = Object.getPrototypeOf(Uint8Array.prototype) as { set(src: ArrayLike<number>, offset?: number): void };
    const set = typed.set;
    let copied = 0;
    const spy = vi.spyOn(typed, "set").mockImplementation(function (this: Uint8Array, src: ArrayLike<number>, offset?: number) {
      copied += src.length;
      set.call(this, src, offset);
    });
    const got = [];
    try {
      const dec = new EventStreamDecoder(codec);
      for (let i = 0; i < big.length; i += 1024) got.push(...dec.push(big.subarray(i, i + 1024)));
      dec.end();
    } finally {
      spy.mockRestore();
    }
    expect(got).toHaveLength(1);
    expect(JSON.parse(toFrame(got[0]!).payload).delta.text).toHaveLength(size);
    expect(copied).toBeLessThan(3 * big.length);
  });

  it("a frame length past the limit is refused from its first 4 bytes, split or not, before anything is held", () => {
    const prelude = Buffer.from("7fffffff", "hex");
    expect(() => new EventStreamDecoder(codec).push(prelude)).toThrow(/out of range/);
    const dec = new EventStreamDecoder(codec);
    expect(dec.push(prelude.subarray(0, 2))).toEqual([]);
    expect(() => dec.push(prelude.subarray(2))).toThrow(/frame length 2147483647 is out of range/);
  });
});

// A frame past the event bound (server.upstream_limits.event_chars) is an answer the gateway will not hold, not a
// corrupt stream: the review found a 20 MiB frame called "corrupt" and retried on the same endpoint, and the setting
// did not move the bound. A frame whose prelude fails its own checksum, or whose length no setting can admit, is
// still corruption.
describe("a frame past the event bound", () => {
  const MiB = 1024 * 1024;
  /** The 12-byte prelude of a frame of `total` bytes (no headers), with a right or a wrong prelude CRC. */
  const prelude = (total: number, crcOk = true) => {
    const b = Buffer.alloc(12);
    b.writeUInt32BE(total, 0);
    b.writeUInt32BE(0, 4);
    b.writeUInt32BE(crcOk ? crc32(b.subarray(0, 8)) : 0, 8);
    return b;
  };
  /** A real frame (right CRCs) of a little over `bytes`. */
  const frameOf = (bytes: number) => ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "a".repeat(bytes) } });
  async function* reads(...chunks: Uint8Array[]) { yield* chunks; }
  /** A body whose upstream client's event bound is `chars` (as providers/http.ts marks it), or the default. */
  const body = (chars: number | undefined, ...chunks: Uint8Array[]) => {
    const b = reads(...chunks);
    if (chars !== undefined) limitEvents(b, chars);
    return b;
  };
  const drain = async (it: AsyncIterable<unknown>) => {
    const got: unknown[] = [];
    for await (const x of it) got.push(x);
    return got;
  };

  it("20 MiB under the default 16 MiB bound: refused as too large from its prelude, naming its length and the bound", () => {
    const err = (() => {
      try {
        new EventStreamDecoder(codec).push(prelude(20 * MiB));
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(EventStreamFrameTooLargeError);
    expect(err).toMatchObject({ length: 20 * MiB, limit: 16 * MiB });
  });

  it("the prelude split across reads, and after good frames in the same read (those are handed out first)", () => {
    const dec = new EventStreamDecoder(codec);
    expect(dec.push(prelude(20 * MiB).subarray(0, 5))).toEqual([]);
    expect(() => dec.push(prelude(20 * MiB).subarray(5))).toThrow(EventStreamFrameTooLargeError);
    const after = new EventStreamDecoder(codec);
    expect(after.push(Buffer.concat([VECTOR, prelude(20 * MiB)]))).toHaveLength(1);
    expect(() => after.check()).toThrow(EventStreamFrameTooLargeError);
  });

  it("server.upstream_limits.event_chars lowers the bound: an 8 KiB frame past 4 KiB is refused", async () => {
    await expect(drain(decodeFrames(body(4096, VECTOR, frameOf(8192))))).rejects.toMatchObject({ constructor: EventStreamFrameTooLargeError, limit: 4096 });
  });

  it("server.upstream_limits.event_chars raises the bound: a 20 MiB frame is decoded whole", async () => {
    const frames = await drain(decodeFrames(body(32 * MiB, frameOf(20 * MiB)))) as { payload: string }[];
    expect(frames).toHaveLength(1);
    expect(JSON.parse(frames[0]!.payload).delta.text).toHaveLength(20 * MiB);
  });

  it("a prelude whose checksum fails is corruption, not a large frame, whatever its length says", () => {
    const err = (() => {
      try {
        new EventStreamDecoder(codec).push(prelude(20 * MiB, false));
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(EventStreamFramingError);
    expect(err).not.toBeInstanceOf(EventStreamFrameTooLargeError);
    expect(String((err as Error).message)).toMatch(/prelude checksum/);
  });

  it("a length past the largest bound a setting can give (event_chars' maximum) is corruption", () => {
    const schema = JSON.parse(readFileSync(new URL("../../schemas/gateway.schema.json", import.meta.url), "utf8"));
    const max: number = schema.properties.server.properties.upstream_limits.properties.event_chars.maximum;
    expect(LONGEST_FRAME).toBe(max);
    expect(() => new EventStreamDecoder(codec, max).push(prelude(max + 1))).toThrow(/frame length \d+ is out of range/);
    expect(() => new EventStreamDecoder(codec, max).push(prelude(max + 1))).not.toThrow(EventStreamFrameTooLargeError);
  });
});
