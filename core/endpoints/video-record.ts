// A finished keyed video's record in gateway.store (its idempotency record), which other replicas and a restarted
// process deliver it from. The job is billed before this write: a record the store could not take (an outage) left
// the key claimed until job_timeout_seconds, other replicas answered 504 meanwhile and then started, and billed, a
// second job. So a failed write is retried in the background, as plugins/idempotency does, until the store takes it;
// this process keeps serving the job from memory meanwhile (video-jobs.ts keeps finished jobs 24 hours).
import { setTimeout as sleep } from "node:timers/promises";
import type { GatewayHandle } from "../contracts/gateway.ts";

/** First retry, and the longest gap between retries (plugins/idempotency's saveLater). */
export const RETRY_FIRST_MS = 250;
export const RETRY_MAX_MS = 5_000;

/**
 * Write the record; when the store cannot take it, try again in the background until it does, `giveUpAt` passes (the
 * record would be kept no longer anyway) or `stop` is aborted (the gateway closes). Resolves after the first try.
 * Timers are unref'd: a stopping process does not wait for them.
 */
export async function recordJob(
  gateway: GatewayHandle, jobId: string, write: () => Promise<unknown>, o: { giveUpAt: number; stop: AbortSignal },
): Promise<void> {
  try {
    await write();
  } catch (err) {
    gateway.log.warn("video job record not saved yet; retrying while this process serves the job", { job: jobId, error: String(err) });
    void retry(gateway, jobId, write, o);
  }
}

async function retry(gateway: GatewayHandle, jobId: string, write: () => Promise<unknown>, o: { giveUpAt: number; stop: AbortSignal }): Promise<void> {
  for (let wait = RETRY_FIRST_MS; Date.now() + wait < o.giveUpAt; wait = Math.min(wait * 2, RETRY_MAX_MS)) {
    try {
      await sleep(wait, undefined, { ref: false, signal: o.stop });
    } catch {
      return; // closing
    }
    try {
      await write();
      gateway.log.info("video job record saved after a retry", { job: jobId });
      return;
    } catch {
      // still unavailable: try again
    }
  }
  if (!o.stop.aborted) gateway.log.warn("video job record not saved; other replicas cannot deliver this video", { job: jobId });
}
