// The seconds a video request is generated (and billed) for: the requested duration clamped to what the model
// supports. Its own module because the budget reserves exactly this before the videos endpoint runs.
import type { ModelRuntime } from "../config/runtime.ts";

/** The requested seconds clamped to what the model supports (a list of lengths, or a min..max range). */
export function clampDuration(model: ModelRuntime, requested: number | undefined): number {
  const limits = (model.config.limits ?? {}) as Record<string, any>;
  const allowed: number[] | undefined = Array.isArray(limits.durations) ? [...limits.durations].sort((a, b) => a - b) : undefined;
  if (allowed?.length) {
    if (requested === undefined) return limits.default_duration ?? allowed[0]!;
    return allowed.find((d) => d >= requested) ?? allowed[allowed.length - 1]!;
  }
  const min = limits.min_duration ?? 1;
  const max = limits.max_duration ?? 10;
  const want = requested ?? limits.default_duration ?? Math.min(max, Math.max(min, 5));
  return Math.min(max, Math.max(min, want));
}
