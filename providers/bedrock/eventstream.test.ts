import { describe, expect, it, vi } from "vitest";
import { fromUtf8 } from "@smithy/util-utf8";
import { decodeFrames, EventStreamDecoder, EventStreamFramingError, eventStreamCodec, toFrame } from "./eventstream.ts";

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
