// The id of the job running under a keyed video's claim, shared through the store's memos: a replica that attaches to
// another's job and gives up waiting names it in its 504 (details.job_id), as the replica running it does. Best
// effort: a write that fails is logged, a read that fails or is slow leaves the id out.
import type { GatewayContext } from "../pipeline/context.ts";
import { settleWithin } from "../deadline.ts";

const jobIdKey = (scope: string) => `video-job:${scope}`;
const JOB_ID_READ_MS = 300;

/** Leave the id of the job now running under `scope` for replicas that attach to it (their 504 names it). */
export function shareJobId(ctx: GatewayContext, scope: string, jobId: string, ttlMs: number): void {
  ctx.gateway.store.memos.put(jobIdKey(scope), jobId, ttlMs, Date.now()).catch((err) => {
    ctx.gateway.log.warn("video job id not shared", { requestId: ctx.requestId, error: String(err) });
  });
}

/** The id of the job another replica runs under `scope`, when it is known in time. */
export async function sharedJobId(ctx: GatewayContext, scope: string): Promise<string | undefined> {
  try {
    const found = await settleWithin(ctx.gateway.store.memos.get([jobIdKey(scope)], Date.now()), JOB_ID_READ_MS, () => undefined);
    return found?.get(jobIdKey(scope));
  } catch {
    return undefined;
  }
}
