// A minimal MP4 (ISO BMFF) muxer for one H.264 video track: ftyp, moov (mvhd, trak with avc1/avcC sample entry
// and sample tables), then mdat. moov comes first ("fast start") so players can begin before the whole download.
import { geometry, idrSlice, pps, sps, LEVEL, PROFILE_BASELINE } from "./h264.ts";

function box(type: string, ...parts: Uint8Array[]): Buffer {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length, 0);
  head.write(type, 4, "ascii");
  return Buffer.concat([head, body]);
}

function full(type: string, version: number, flags: number, ...parts: Uint8Array[]): Buffer {
  const vf = Buffer.alloc(4);
  vf.writeUInt32BE(((version & 0xff) << 24) | (flags & 0xffffff), 0);
  return box(type, vf, ...parts);
}

function u32(...values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4));
  return b;
}

function u16(...values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 2);
  values.forEach((v, i) => b.writeUInt16BE(v & 0xffff, i * 2));
  return b;
}

const MATRIX = u32(0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000);

export interface Mp4Options {
  width: number;
  height: number;
  fps: number;
  frames: number;
  /** RGB pixels of frame i. */
  frame(i: number): Uint8Array;
}

function sample(o: Mp4Options, i: number): Buffer {
  const slice = idrSlice(geometry(o.width, o.height), o.frame(i), i);
  return Buffer.concat([u32(slice.length), slice]);
}

export function encodeMp4(o: Mp4Options): Buffer {
  return mux(o, Array.from({ length: o.frames }, (_, i) => sample(o, i)));
}

/** The same file, yielding to the event loop between frames (a long clip takes a few hundred ms of CPU). */
export async function encodeMp4Async(o: Mp4Options): Promise<Buffer> {
  const samples: Buffer[] = [];
  for (let i = 0; i < o.frames; i++) {
    samples.push(sample(o, i));
    await new Promise<void>((r) => setImmediate(r));
  }
  return mux(o, samples);
}

function mux(o: Mp4Options, samples: Buffer[]): Buffer {
  const g = geometry(o.width, o.height);
  const spsNal = sps(g);
  const ppsNal = pps();
  const durationMs = Math.round((o.frames / o.fps) * 1000);

  const ftyp = box("ftyp", Buffer.from("isom"), u32(0x200), Buffer.from("isomiso2avc1mp41"));
  const avcC = box("avcC",
    Buffer.from([1, PROFILE_BASELINE, 0xc0, LEVEL, 0xff, 0xe1]), u16(spsNal.length), spsNal,
    Buffer.from([1]), u16(ppsNal.length), ppsNal);
  const compressor = Buffer.alloc(32);
  compressor.write("\u0008model-gw", 0, "latin1");
  const avc1 = box("avc1",
    Buffer.alloc(6), u16(1), // reserved, data_reference_index
    u16(0, 0), u32(0, 0, 0), // pre_defined, reserved, pre_defined
    u16(o.width, o.height), u32(0x00480000, 0x00480000, 0), u16(1), compressor, u16(0x0018, 0xffff),
    avcC);
  const moovFor = (chunkOffset: number) => box("moov",
    full("mvhd", 0, 0, u32(0, 0, 1000, durationMs, 0x00010000), u16(0x0100, 0), u32(0, 0), MATRIX, u32(0, 0, 0, 0, 0, 0), u32(2)),
    box("trak",
      full("tkhd", 0, 3, u32(0, 0, 1, 0, durationMs, 0, 0), u16(0, 0, 0, 0), MATRIX, u32(o.width << 16, o.height << 16)),
      box("mdia",
        full("mdhd", 0, 0, u32(0, 0, o.fps, o.frames), u16(0x55c4, 0)),
        full("hdlr", 0, 0, u32(0), Buffer.from("vide"), u32(0, 0, 0), Buffer.from("VideoHandler\0")),
        box("minf",
          full("vmhd", 0, 1, u16(0, 0, 0, 0)),
          box("dinf", full("dref", 0, 0, u32(1), full("url ", 0, 1))),
          box("stbl",
            full("stsd", 0, 0, u32(1), avc1),
            full("stts", 0, 0, u32(1, o.frames, 1)),
            full("stsc", 0, 0, u32(1, 1, o.frames, 1)),
            full("stsz", 0, 0, u32(0, o.frames), ...samples.map((s) => u32(s.length))),
            full("stco", 0, 0, u32(1, chunkOffset)),
          )))));
  const moovSize = moovFor(0).length;
  const moov = moovFor(ftyp.length + moovSize + 8);
  return Buffer.concat([ftyp, moov, box("mdat", ...samples)]);
}
