// The simulator's real media files: the PNG encoder (chunks, CRCs, pixels) and the MP4/H.264 writer (box tree,
// sample table, NAL units). When ffprobe/ffmpeg are installed the MP4 is also decoded by a real decoder.
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import { crc32, encodePng } from "./png.ts";
import { encodeMp4 } from "./mp4.ts";
import { paint, seedBytes } from "./picture.ts";

function chunks(png: Buffer) {
  const out: { type: string; data: Buffer; crcOk: boolean }[] = [];
  for (let at = 8; at < png.length;) {
    const len = png.readUInt32BE(at);
    if (at + 12 + len > png.length) throw new Error("truncated chunk");
    const type = png.subarray(at + 4, at + 8).toString("ascii");
    const data = png.subarray(at + 8, at + 8 + len);
    const crc = png.readUInt32BE(at + 8 + len);
    out.push({ type, data, crcOk: ((crc32(png.subarray(at + 4, at + 8 + len)) ^ 0xffffffff) >>> 0) === crc });
    at += 12 + len;
  }
  return out;
}

function boxes(buf: Buffer, start = 0, end = buf.length): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (let at = start; at < end;) {
    const size = buf.readUInt32BE(at);
    if (size < 8 || at + size > end) throw new Error(`bad box at ${at} (size ${size})`);
    out.set(buf.subarray(at + 4, at + 8).toString("latin1"), buf.subarray(at, at + size));
    at += size;
  }
  return out;
}
const child = (box: Buffer, type: string, skip = 0) => boxes(box, 8 + skip, box.length).get(type)!;

const hasFfprobe = (() => {
  try {
    execFileSync("ffprobe", ["-version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe("PNG encoder", () => {
  it("writes IHDR/IDAT/IEND with valid CRCs and the exact pixels", () => {
    const rgb = paint(7, 5, seedBytes("t"));
    const png = encodePng(7, 5, rgb);
    expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
    const c = chunks(png);
    expect(c.map((x) => x.type)).toEqual(["IHDR", "IDAT", "IEND"]);
    expect(c.every((x) => x.crcOk)).toBe(true);
    expect([c[0]!.data.readUInt32BE(0), c[0]!.data.readUInt32BE(4), c[0]!.data[8], c[0]!.data[9]]).toEqual([7, 5, 8, 2]);
    const raw = inflateSync(c[1]!.data);
    expect(raw.length).toBe(5 * (1 + 7 * 3));
    for (let y = 0; y < 5; y++) {
      expect(raw[y * 22]).toBe(0);
      expect(Buffer.from(raw.subarray(y * 22 + 1, (y + 1) * 22)).equals(Buffer.from(rgb.subarray(y * 21, (y + 1) * 21)))).toBe(true);
    }
  });
});

describe("MP4 writer", () => {
  const frames = 6;
  const mp4 = encodeMp4({ width: 40, height: 24, fps: 6, frames, frame: (i) => paint(40, 24, seedBytes("v"), i / frames) });

  it("has ftyp, moov (fast start) and mdat with a consistent sample table", () => {
    const top = boxes(mp4);
    expect([...top.keys()]).toEqual(["ftyp", "moov", "mdat"]);
    const stbl = child(child(child(child(top.get("moov")!, "trak"), "mdia"), "minf"), "stbl");
    const stsz = child(stbl, "stsz");
    expect(stsz.readUInt32BE(16)).toBe(frames);
    const sizes = Array.from({ length: frames }, (_, i) => stsz.readUInt32BE(20 + i * 4));
    const offset = child(stbl, "stco").readUInt32BE(16);
    const mdat = top.get("mdat")!;
    expect(offset).toBe(mp4.indexOf(mdat) + 8);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(mdat.length - 8);
    // every sample is one length-prefixed IDR NAL unit
    let at = offset;
    for (const size of sizes) {
      expect(mp4.readUInt32BE(at) + 4).toBe(size);
      expect(mp4[at + 4]! & 0x1f).toBe(5);
      at += size;
    }
    const avcC = child(child(child(stbl, "stsd"), "avc1", 8), "avcC", 78);
    expect(avcC[16]! & 0x1f).toBe(7); // the SPS NAL unit after version, profile, compat, level, sizes and its length
    const mdhd = child(child(child(top.get("moov")!, "trak"), "mdia"), "mdhd");
    expect([mdhd.readUInt32BE(20), mdhd.readUInt32BE(24)]).toEqual([6, frames]); // timescale = fps, one tick a frame
  });

  it.skipIf(!hasFfprobe)("decodes with ffmpeg as H.264 at the stated size and frame count", () => {
    const file = join(mkdtempSync(join(tmpdir(), "mg-mp4-")), "v.mp4");
    writeFileSync(file, mp4);
    const info = execFileSync("ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0", file]).toString().trim();
    expect(info).toBe("h264,40,24,6");
    execFileSync("ffmpeg", ["-v", "error", "-xerror", "-i", file, "-f", "null", "-"]);
  });
});
