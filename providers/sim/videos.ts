// Simulated video generation: after a realistic delay, a real MP4 (H.264 Baseline, I_PCM macroblocks) of the
// requested length and aspect ratio at a small resolution and 6 frames per second, deterministic per prompt.
import { setTimeout as sleep } from "node:timers/promises";
import type { SimOptions } from "../../core/generated/types/gateway.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import type { VideosCall, VideosOutput } from "../../core/contracts/media.ts";
import { estimateTokens } from "../../core/metering/estimate-tokens.ts";
import { encodeMp4Async } from "./mp4.ts";
import { paint, seedBytes } from "./picture.ts";

export const SIM_FPS = 6;

/** Small frame sizes (even numbers) per aspect ratio. */
const SIZES: Record<string, [number, number]> = {
  "16:9": [128, 72], "9:16": [72, 128], "1:1": [96, 96], "4:3": [96, 72], "3:4": [72, 96], "21:9": [168, 72],
};

export async function simVideos(call: VideosCall, target: Target, opts: CallOptions, sim: SimOptions): Promise<ProviderResult> {
  const [width, height] = SIZES[call.aspectRatio ?? "16:9"] ?? SIZES["16:9"]!;
  await sleep(sim.video_ms ?? 8000, undefined, { signal: opts.signal });
  const frames = Math.max(1, Math.round(call.duration * SIM_FPS));
  const seed = seedBytes(target.upstreamModel, call.prompt, call.imageUrl ?? "");
  const bytes = await encodeMp4Async({ width, height, fps: SIM_FPS, frames, frame: (i) => paint(width, height, seed, i / frames) });
  const out: VideosOutput = {
    bytes,
    contentType: "video/mp4",
    duration: frames / SIM_FPS,
    size: `${width}x${height}`,
    inputTokens: estimateTokens(call.prompt),
  };
  return { kind: "json", body: out };
}
