// A tiny H.264 (Baseline, CAVLC) encoder that writes every macroblock as I_PCM: raw YCbCr 4:2:0 samples inside
// a standard bitstream. Big per frame, but a real stream any decoder plays, with no codec library.

class Bits {
  private buf = new Uint8Array(1024);
  private len = 0;
  private cur = 0;
  private n = 0;
  private push(v: number): void {
    if (this.len === this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.len++] = v;
  }
  u(bits: number, value: number): void {
    for (let i = bits - 1; i >= 0; i--) this.bit((value >>> i) & 1);
  }
  bit(b: number): void {
    this.cur = (this.cur << 1) | b;
    if (++this.n === 8) {
      this.push(this.cur);
      this.cur = 0;
      this.n = 0;
    }
  }
  ue(v: number): void {
    const x = v + 1;
    const len = 32 - Math.clz32(x);
    this.u(len - 1, 0);
    this.u(len, x);
  }
  se(v: number): void {
    this.ue(v > 0 ? 2 * v - 1 : -2 * v);
  }
  aligned(): boolean {
    return this.n === 0;
  }
  alignZero(): void {
    while (this.n) this.bit(0);
  }
  /** Raw bytes; only when byte-aligned. */
  bytes(data: Uint8Array): void {
    while (this.len + data.length > this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf.subarray(0, this.len));
      this.buf = next;
    }
    this.buf.set(data, this.len);
    this.len += data.length;
  }
  trailing(): void {
    this.bit(1);
    this.alignZero();
  }
  done(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
}

/** NAL header byte + payload with emulation-prevention bytes (00 00 0x -> 00 00 03 0x). */
function nal(header: number, rbsp: Uint8Array): Uint8Array {
  const out = new Uint8Array(1 + rbsp.length + (rbsp.length >> 1) + 1);
  let len = 0;
  out[len++] = header;
  let zeros = 0;
  for (let i = 0; i < rbsp.length; i++) {
    const b = rbsp[i]!;
    if (zeros >= 2 && b <= 3) {
      out[len++] = 3;
      zeros = 0;
    }
    out[len++] = b;
    zeros = b === 0 ? zeros + 1 : 0;
  }
  return out.subarray(0, len);
}

export const PROFILE_BASELINE = 66;
export const LEVEL = 30;

export interface StreamGeometry {
  width: number;
  height: number;
  mbW: number;
  mbH: number;
}

export function geometry(width: number, height: number): StreamGeometry {
  return { width, height, mbW: Math.ceil(width / 16), mbH: Math.ceil(height / 16) };
}

export function sps(g: StreamGeometry): Uint8Array {
  const b = new Bits();
  b.u(8, PROFILE_BASELINE);
  b.u(8, 0xc0); // constraint_set0/1 flags
  b.u(8, LEVEL);
  b.ue(0); // seq_parameter_set_id
  b.ue(0); // log2_max_frame_num_minus4
  b.ue(2); // pic_order_cnt_type 2: output order = decode order
  b.ue(1); // max_num_ref_frames
  b.u(1, 0); // gaps_in_frame_num_value_allowed_flag
  b.ue(g.mbW - 1);
  b.ue(g.mbH - 1);
  b.u(1, 1); // frame_mbs_only_flag
  b.u(1, 1); // direct_8x8_inference_flag
  const cropRight = g.mbW * 16 - g.width;
  const cropBottom = g.mbH * 16 - g.height;
  if (cropRight || cropBottom) {
    b.u(1, 1);
    b.ue(0);
    b.ue(cropRight / 2); // 4:2:0 crop units are 2 samples
    b.ue(0);
    b.ue(cropBottom / 2);
  } else {
    b.u(1, 0);
  }
  b.u(1, 0); // vui_parameters_present_flag
  b.trailing();
  return nal(0x67, b.done());
}

export function pps(): Uint8Array {
  const b = new Bits();
  b.ue(0); // pic_parameter_set_id
  b.ue(0); // seq_parameter_set_id
  b.u(1, 0); // entropy_coding_mode_flag: CAVLC
  b.u(1, 0); // bottom_field_pic_order_in_frame_present_flag
  b.ue(0); // num_slice_groups_minus1
  b.ue(0);
  b.ue(0);
  b.u(1, 0); // weighted_pred_flag
  b.u(2, 0); // weighted_bipred_idc
  b.se(0); // pic_init_qp_minus26
  b.se(0); // pic_init_qs_minus26
  b.se(0); // chroma_qp_index_offset
  b.u(1, 0); // deblocking_filter_control_present_flag
  b.u(1, 0); // constrained_intra_pred_flag
  b.u(1, 0); // redundant_pic_cnt_present_flag
  b.trailing();
  return nal(0x68, b.done());
}

const clampSample = (v: number) => (v < 1 ? 1 : v > 254 ? 254 : Math.round(v));

/** BT.601 limited-range planes: Y at full size, Cb and Cr averaged over 2x2 blocks, padded to whole macroblocks. */
function planes(g: StreamGeometry, rgb: Uint8Array): { y: Uint8Array; cb: Uint8Array; cr: Uint8Array; yw: number; cw: number } {
  const yw = g.mbW * 16;
  const yh = g.mbH * 16;
  const cw = yw / 2;
  const y = new Uint8Array(yw * yh);
  const cbSum = new Float64Array(cw * (yh / 2));
  const crSum = new Float64Array(cw * (yh / 2));
  for (let py = 0; py < yh; py++) {
    const sy = Math.min(py, g.height - 1);
    for (let px = 0; px < yw; px++) {
      const o = (sy * g.width + Math.min(px, g.width - 1)) * 3;
      const r = rgb[o]!;
      const gg = rgb[o + 1]!;
      const b = rgb[o + 2]!;
      y[py * yw + px] = clampSample(16 + (65.481 * r + 128.553 * gg + 24.966 * b) / 255);
      const c = (py >> 1) * cw + (px >> 1);
      cbSum[c] += 128 + (-37.797 * r - 74.203 * gg + 112 * b) / 255;
      crSum[c] += 128 + (112 * r - 93.786 * gg - 18.214 * b) / 255;
    }
  }
  const cb = new Uint8Array(cbSum.length);
  const cr = new Uint8Array(crSum.length);
  for (let i = 0; i < cb.length; i++) {
    cb[i] = clampSample(cbSum[i]! / 4);
    cr[i] = clampSample(crSum[i]! / 4);
  }
  return { y, cb, cr, yw, cw };
}

/** One IDR picture from RGB pixels (width*height*3), every macroblock I_PCM. */
export function idrSlice(g: StreamGeometry, rgb: Uint8Array, idrPicId: number): Uint8Array {
  const b = new Bits();
  b.ue(0); // first_mb_in_slice
  b.ue(7); // slice_type: I (all slices of the picture)
  b.ue(0); // pic_parameter_set_id
  b.u(4, 0); // frame_num
  b.ue(idrPicId & 0xffff);
  b.u(1, 0); // no_output_of_prior_pics_flag
  b.u(1, 0); // long_term_reference_flag
  b.se(0); // slice_qp_delta
  const p = planes(g, rgb);
  const mb = new Uint8Array(384);
  for (let my = 0; my < g.mbH; my++) {
    for (let mx = 0; mx < g.mbW; mx++) {
      b.ue(25); // mb_type I_PCM
      b.alignZero();
      for (let r = 0; r < 16; r++) mb.set(p.y.subarray((my * 16 + r) * p.yw + mx * 16, (my * 16 + r) * p.yw + mx * 16 + 16), r * 16);
      for (let r = 0; r < 8; r++) {
        const at = (my * 8 + r) * p.cw + mx * 8;
        mb.set(p.cb.subarray(at, at + 8), 256 + r * 8);
        mb.set(p.cr.subarray(at, at + 8), 320 + r * 8);
      }
      b.bytes(mb);
    }
  }
  b.trailing();
  return nal(0x65, b.done());
}
