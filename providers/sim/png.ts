// A minimal PNG encoder (8-bit RGB, no interlace): signature, IHDR, one zlib IDAT, IEND, each chunk CRC32-checked.
import { deflate, deflateSync } from "node:zlib";
import { promisify } from "node:util";

const deflateAsync = promisify(deflate);

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(bytes: Uint8Array, crc = 0xffffffff): number {
  let c = crc;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return c;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, "ascii");
  out.set(data, 8);
  out.writeUInt32BE((crc32(out.subarray(4, 8 + data.length)) ^ 0xffffffff) >>> 0, 8 + data.length);
  return out;
}

function header(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: truecolour
  // compression, filter and interlace methods: 0
  return ihdr;
}

/** Scanlines, each led by filter type 0 (None). */
function scanlines(width: number, height: number, rgb: Uint8Array): Buffer {
  const stride = width * 3;
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) raw.set(rgb.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  return raw;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The same PNG, compressed on the libuv thread pool instead of the event loop. */
export async function encodePngAsync(width: number, height: number, rgb: Uint8Array): Promise<Buffer> {
  const idat = await deflateAsync(scanlines(width, height, rgb), { level: 6 });
  return Buffer.concat([SIGNATURE, chunk("IHDR", header(width, height)), chunk("IDAT", idat), chunk("IEND", new Uint8Array(0))]);
}

/** rgb: width*height*3 bytes, row-major. */
export function encodePng(width: number, height: number, rgb: Uint8Array): Buffer {
  return Buffer.concat([SIGNATURE, chunk("IHDR", header(width, height)), chunk("IDAT", deflateSync(scanlines(width, height, rgb), { level: 6 })), chunk("IEND", new Uint8Array(0))]);
}
