// What a keyed /videos request's idempotency key names: its request fingerprint, and whether the key is already taken
// (a job running or finished under it, here or on another replica). Its own
// module because the budget plugin asks before the videos endpoint runs: a request that will only attach to (or
// collect) a job someone already paid for reserves nothing (docs/media.md), and gets a reservation to make if
// it must start a job after all (ctx.reserveSkipped, declared in core/http/idempotency-key.ts).
import { createHash } from "node:crypto";
import { ulid } from "ulid";
import type { GatewayContext } from "../pipeline/context.ts";
import type { ModelRuntime } from "../config/runtime.ts";
import { idempotencyKey, idempotencyScope } from "../http/idempotency-key.ts";
import { clampDuration } from "./video-duration.ts";
import { videoJobsOf } from "./video-jobs.ts";

/** Hash of what makes two video requests the same; a key reused for a different one is a conflict. */
export function videoFingerprint(model: ModelRuntime, body: Record<string, any>, sandbox: boolean): string {
  const duration = clampDuration(model, body.duration);
  return createHash("sha256")
    .update(JSON.stringify([model.id, body.prompt, body.image_url, body.last_frame_url, body.aspect_ratio, duration, sandbox]))
    .digest("hex");
}

/** A probe's claim is given back at once; should that fail, it only delays a real claim this long. */
const PROBE_LEASE_MS = 1_000;

/**
 * True when this /videos request carries an idempotency key that a job already holds: running in this process, or
 * claimed, finished or conflicting in the store. The store has no read-only lookup, so a key nobody holds is claimed
 * for a moment and given back. Any doubt (no key, a bad one, an unknown model, a store error) answers false: the
 * request then reserves as any other.
 */
export async function videoKeyTaken(ctx: GatewayContext): Promise<boolean> {
  const model = typeof ctx.body?.model === "string" ? ctx.config.models.get(ctx.body.model) : undefined;
  if (!model || model.type !== "video" || !ctx.auth) return false;
  let key: string | undefined;
  try {
    key = idempotencyKey(ctx);
  } catch {
    return false; // the endpoint answers the 400
  }
  if (key === undefined) return false;
  const { projectId, sandbox } = ctx.auth;
  if (videoJobsOf(ctx.gateway).find(projectId, key, sandbox)) return true;
  const store = ctx.gateway.store;
  const scope = idempotencyScope(projectId, "videos", key, sandbox);
  const owner = `probe:${ctx.requestId}:${ulid()}`;
  try {
    const state = await store.idempotencyBegin(scope, videoFingerprint(model, ctx.body, sandbox), owner, PROBE_LEASE_MS, Date.now());
    if (state.state !== "new") return true;
    await store.idempotencyRelease(scope, owner);
  } catch {
    // the store is out: reserve as usual
  }
  return false;
}
