// Deterministic pictures for the simulator: a two-colour gradient with a few soft discs, seeded by the prompt,
// so the same prompt gives the same image and different prompts look different.
import { createHash } from "node:crypto";

export function seedBytes(...parts: string[]): Buffer {
  return createHash("sha256").update(parts.join("\u0000")).digest();
}

function colour(seed: Buffer, at: number): [number, number, number] {
  return [seed[at]!, seed[at + 1]!, seed[at + 2]!];
}

/** RGB pixels (width*height*3). `phase` (0..1) moves the discs, for video frames. */
export function paint(width: number, height: number, seed: Buffer, phase = 0): Uint8Array {
  const out = new Uint8Array(width * height * 3);
  const a = colour(seed, 0);
  const b = colour(seed, 3);
  const discs = [0, 1, 2].map((i) => ({
    x: ((seed[6 + i]! / 255 + phase * (i + 1) * 0.5) % 1) * width,
    y: (seed[9 + i]! / 255) * height,
    r: (0.08 + (seed[12 + i]! / 255) * 0.2) * Math.min(width, height),
    c: colour(seed, 15 + i * 3),
  }));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const t = (x / width + y / height) / 2;
      let r = a[0] + (b[0] - a[0]) * t;
      let g = a[1] + (b[1] - a[1]) * t;
      let bl = a[2] + (b[2] - a[2]) * t;
      for (const d of discs) {
        const dx = x - d.x;
        const dy = y - d.y;
        const dist = Math.sqrt(dx * dx + dy * dy);
        if (dist < d.r) {
          const k = 1 - dist / d.r;
          r += (d.c[0] - r) * k;
          g += (d.c[1] - g) * k;
          bl += (d.c[2] - bl) * k;
        }
      }
      const o = (y * width + x) * 3;
      out[o] = r;
      out[o + 1] = g;
      out[o + 2] = bl;
    }
  }
  return out;
}

/** Largest side actually painted; bigger pictures are painted small and scaled up (nearest neighbour), so a
 *  2048-pixel request costs milliseconds, not seconds, of the event loop. */
const PAINT_MAX = 256;

export function paintScaled(width: number, height: number, seed: Buffer, phase = 0): Uint8Array {
  const scale = Math.max(1, Math.ceil(Math.max(width, height) / PAINT_MAX));
  if (scale === 1) return paint(width, height, seed, phase);
  const sw = Math.ceil(width / scale);
  const sh = Math.ceil(height / scale);
  const small = paint(sw, sh, seed, phase);
  const out = Buffer.alloc(width * height * 3);
  const stride = width * 3;
  for (let sy = 0; sy < sh; sy++) {
    const y0 = sy * scale;
    if (y0 >= height) break;
    const row = out.subarray(y0 * stride, (y0 + 1) * stride);
    for (let x = 0; x < width; x++) {
      const o = (sy * sw + Math.floor(x / scale)) * 3;
      row[x * 3] = small[o]!;
      row[x * 3 + 1] = small[o + 1]!;
      row[x * 3 + 2] = small[o + 2]!;
    }
    for (let y = y0 + 1; y < Math.min(height, y0 + scale); y++) row.copy(out, y * stride);
  }
  return out;
}
