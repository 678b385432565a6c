// How long a video job may run in total (limits.job_timeout_seconds). Its own module because the budget plugin
// leases the starting request's hold for at least this long before the videos endpoint runs: the job carries that
// hold and settles it when it ends (video-jobs.ts).
import type { ModelRuntime } from "../config/runtime.ts";

/** A job may run on after a held request gave up (504), for a repeat with the same key to collect. */
export const VIDEO_JOB_TIMEOUT_MS = 30 * 60_000;

/** The model's job_timeout_seconds in ms, else the default. */
export function videoJobTimeoutMs(model: ModelRuntime): number {
  const s = (model.config.limits as Record<string, any> | undefined)?.job_timeout_seconds;
  return typeof s === "number" && s > 0 ? s * 1000 : VIDEO_JOB_TIMEOUT_MS;
}
