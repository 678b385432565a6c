// A tiny H.264 (Baseline, CAVLC) encoder that writes every macroblock as I_PCM: raw YCbCr 4:2:0 samples inside
// a standard bitstream. Big per frame, but a real stream any decoder plays, with no codec library.

class Bits {
  private bytes: number[] = [];
  private cur = 0;
  private n = 0;
  u(bits: number, value: number): void {
    for (let i = bits - 1; i >= 0; i--) this.bit((value >>> i) & 1);
  }
  bit(b: number): void {
    this.cur = (this.cur << 1) | b;
    if (++this.n === 8) {
      this.bytes.push(this.cur);
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
  byte(b: number): void {
    this.bytes.push(b); // only when aligned
  }
  trailing(): void {
    this.bit(1);
    this.alignZero();
  }
  done(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }
}

/** NAL header byte + payload with emulation-prevention bytes (00 00 0x -> 00 00 03 0x). */
function nal(header: number, rbsp: Uint8Array): Uint8Array {
  const out: number[] = [header];
  let zeros = 0;
  for (const b of rbsp) {
    if (zeros >= 2 && b <= 3) {
      out.push(3);
      zeros = 0;
    }
    out.push(b);
    zeros = b === 0 ? zeros + 1 : 0;
  }
  return Uint8Array.from(out);
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

const clampSample = (v: number) => Math.max(1, Math.min(254, Math.round(v)));

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
  const px = (x: number, y: number) => {
    const cx = Math.min(x, g.width - 1);
    const cy = Math.min(y, g.height - 1);
    const o = (cy * g.width + cx) * 3;
    return [rgb[o]!, rgb[o + 1]!, rgb[o + 2]!] as const;
  };
  for (let my = 0; my < g.mbH; my++) {
    for (let mx = 0; mx < g.mbW; mx++) {
      b.ue(25); // mb_type I_PCM
      b.alignZero();
      for (let y = 0; y < 16; y++) {
        for (let x = 0; x < 16; x++) {
          const [r, gg, bl] = px(mx * 16 + x, my * 16 + y);
          b.byte(clampSample(16 + (65.481 * r + 128.553 * gg + 24.966 * bl) / 255));
        }
      }
      for (const plane of [0, 1]) {
        for (let y = 0; y < 8; y++) {
          for (let x = 0; x < 8; x++) {
            let sum = 0;
            for (const [dx, dy] of [[0, 0], [1, 0], [0, 1], [1, 1]] as const) {
              const [r, gg, bl] = px(mx * 16 + x * 2 + dx, my * 16 + y * 2 + dy);
              sum += plane === 0 ? 128 + (-37.797 * r - 74.203 * gg + 112 * bl) / 255 : 128 + (112 * r - 93.786 * gg - 18.214 * bl) / 255;
            }
            b.byte(clampSample(sum / 4));
          }
        }
      }
    }
  }
  b.trailing();
  return nal(0x65, b.done());
}
