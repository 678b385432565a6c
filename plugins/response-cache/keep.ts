// After a miss: keep a whole, successful answer — a JSON one once the request is through, a stream once it has ended
// normally — as it came back: under guardrails, the answer they hand over before they check it
// (core/pipeline/answer-guard.ts), so a hit goes through the same check over the same answer. No copy: nothing edits a
// kept answer (a request whose guardrails redact is not kept; a stream's recording holds its own events).
import type { GatewayContext, GatewayResponse } from "../../core/pipeline/context.ts";
import type { StoredResponse } from "../../core/store/types.ts";
import { recordStream, storedBytes } from "../../core/pipeline/stored-response.ts";
import { DROPPED_PARAMS_HEADER } from "../../core/contracts/provider.ts";
import type { CachePlan, CacheSettings } from "./plan.ts";
import { completeStream, keepsJson } from "./answer.ts";
import type { Front } from "./front.ts";
import type { CacheEntry } from "./entry.ts";
import type { CacheMetrics } from "./metrics.ts";

/** Headers that describe the answer itself, replayed with it (not rate-limit headers: those are the new request's). */
const ANSWER_HEADERS = ["x-mg-upstream-model", DROPPED_PARAMS_HEADER, "x-mg-upstream-request-id"];

export interface CacheState {
  settings: CacheSettings;
  front?: Front;
  metrics: CacheMetrics;
}

function answerHeaders(ctx: GatewayContext): Record<string, string> {
  const h: Record<string, string> = { "x-mg-original-request-id": ctx.requestId };
  for (const name of ANSWER_HEADERS) {
    const v = ctx.responseHeaders[name];
    if (v !== undefined) h[name] = v;
  }
  return h;
}

/**
 * The answer `r` on its way to be kept: `response` to pass on in its place (a stream, recorded as it is read and kept
 * once it has ended normally) and, for a JSON answer, `save` to keep it once the request is through (an answer the
 * guardrails then refuse is not kept).
 */
export function keeping(ctx: GatewayContext, key: string, plan: CachePlan, state: CacheState, r: GatewayResponse): { response: GatewayResponse; save?: () => void } {
  if (r.kind === "stream") {
    if (r.status < 200 || r.status >= 300) return { response: r };
    const headers = answerHeaders(ctx);
    // The recording holds its own events (each a new object): what a step does to the events it passes on is not in it.
    const events = recordStream(r.events, {
      maxBytes: state.settings.maxEntryBytes,
      done: (events) => {
        if (!events) state.metrics.writes.add(1, ctx.endpoint, "too_large");
        else if (completeStream(ctx.protocol, events)) entryFor(ctx, plan, state, { kind: "stream", status: r.status, headers, events })?.(key);
      },
      failed: () => {},
    });
    return { response: { ...r, events } };
  }
  if (!keepsJson(r, ctx.endpoint)) return { response: r };
  const put = entryFor(ctx, plan, state, { kind: "json", status: r.status, headers: answerHeaders(ctx), body: r.body });
  return { response: r, save: put && (() => put(key)) };
}

/**
 * The entry for `response`, made now: its text, what the store gets. Undefined (counted) when it is too large to keep.
 * Returns what keeps it under a key.
 */
function entryFor(ctx: GatewayContext, plan: CachePlan, state: CacheState, response: StoredResponse): ((key: string) => void) | undefined {
  const now = Date.now();
  const entry: CacheEntry = { v: 1, storedAt: now, expiresAt: now + plan.ttlMs, response };
  let text: string;
  try {
    text = JSON.stringify(entry);
  } catch {
    return undefined; // nothing a provider sends fails here; the answer itself has gone out either way
  }
  const bytes = storedBytes(text);
  if (bytes > state.settings.maxEntryBytes) {
    state.metrics.writes.add(1, ctx.endpoint, "too_large");
    return undefined;
  }
  return (key) => save(ctx, key, plan, state, entry, text, bytes);
}

/** Into the front at once, into the store in the background: the client never waits for the cache. */
function save(ctx: GatewayContext, key: string, plan: CachePlan, state: CacheState, entry: CacheEntry, text: string, bytes: number): void {
  state.front?.set(key, entry, bytes, Date.now());
  const endpoint = ctx.endpoint;
  ctx.gateway.store.responseCache.put(key, text, plan.ttlMs, entry.storedAt).then(
    () => state.metrics.writes.add(1, endpoint, "stored"),
    (err) => {
      state.metrics.writes.add(1, endpoint, "failed");
      // An outage is logged once by the store's guard; this only says which answer it cost.
      ctx.gateway.log.debug("response cache: answer not kept", { requestId: ctx.requestId, error: String(err) });
    },
  );
}
