// What a translator keeps between one request and the next of the same project (TranslateOptions.keep / recalled):
// the store's memos, under `translate:<project>:<id>`, for a day — a tool loop waiting on a person (an approval)
// still finds its turn. Reads are bounded: past RECALL_TIMEOUT_MS (or on a store error) the request goes on without
// them, as if nothing had been kept; writes never hold up the answer.
import { settleWithin } from "../../core/deadline.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";

export const KEEP_TTL_MS = 24 * 3_600_000;
export const RECALL_TIMEOUT_MS = 300;

const memoKey = (project: string, id: string) => `translate:${project}:${id}`;

/** The kept values of these ids (id -> value); empty when none, too slow, or the store failed. */
export async function recall(ctx: GatewayContext, project: string, ids: string[]): Promise<Map<string, string>> {
  try {
    const found = await settleWithin(ctx.gateway.store.memos.get(ids.map((id) => memoKey(project, id)), Date.now()), RECALL_TIMEOUT_MS, () => undefined);
    if (!found) {
      ctx.gateway.log.warn("kept translation state not read in time; going on without it", { requestId: ctx.requestId });
      return new Map();
    }
    const out = new Map<string, string>();
    for (const id of ids) {
      const v = found.get(memoKey(project, id));
      if (v !== undefined) out.set(id, v);
    }
    return out;
  } catch (err) {
    ctx.gateway.log.warn("kept translation state not read; going on without it", { requestId: ctx.requestId, error: String(err) });
    return new Map();
  }
}

/** A keep() for this request's project: stores in the background; a failure is logged, never the client's. */
export function keeper(ctx: GatewayContext, project: string): (id: string, value: string) => void {
  return (id, value) => {
    ctx.gateway.store.memos.put(memoKey(project, id), value, KEEP_TTL_MS, Date.now()).catch((err) => {
      ctx.gateway.log.warn("translation state not kept", { requestId: ctx.requestId, error: String(err) });
    });
  };
}
