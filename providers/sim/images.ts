// Simulated image generation: real PNGs (deterministic per prompt, size and index) after a realistic delay.
import { setTimeout as sleep } from "node:timers/promises";
import type { SimOptions } from "../../core/generated/types/gateway.ts";
import { GatewayError } from "../../core/errors.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import type { ImagesCall, ImagesOutput } from "../../core/contracts/media.ts";
import { estimateTokens } from "../../core/metering/estimate-tokens.ts";
import { encodePngAsync } from "./png.ts";
import { paintScaled, seedBytes } from "./picture.ts";

/** The simulator draws at most 2048 px a side (a real PNG, just not a huge one). */
const MAX_SIDE = 2048;

export function parseSize(size: string | undefined, fallback = "1024x1024"): { width: number; height: number } {
  const s = !size || size === "auto" ? fallback : size;
  const m = /^(\d+)x(\d+)$/.exec(s);
  if (!m) throw new GatewayError(400, "BAD_REQUEST", `size must be WIDTHxHEIGHT (got ${JSON.stringify(s)})`, { details: { field: "size" } });
  const width = Number(m[1]);
  const height = Number(m[2]);
  if (width < 16 || height < 16 || width > MAX_SIDE || height > MAX_SIDE) {
    throw new GatewayError(400, "BAD_REQUEST", `size ${s} is outside 16..${MAX_SIDE} pixels a side`, { details: { field: "size" } });
  }
  return { width, height };
}

export async function simImages(call: ImagesCall, target: Target, opts: CallOptions, sim: SimOptions): Promise<ProviderResult> {
  const { width, height } = parseSize(call.size);
  await sleep(sim.image_ms ?? 2000, undefined, { signal: opts.signal });
  const images = await Promise.all(Array.from({ length: call.n }, async (_, i) => ({
    bytes: await encodePngAsync(width, height, paintScaled(width, height, seedBytes(target.upstreamModel, call.prompt, call.style ?? "", String(i)))),
    contentType: "image/png",
  })));
  const out: ImagesOutput = { images, inputTokens: estimateTokens(call.prompt) };
  return { kind: "json", body: out };
}
