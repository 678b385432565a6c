// After a miss: keep a whole, successful answer — a JSON one once the request is through, a stream once the one the
// client reads has ended uncut (the guardrails judge a stream at its end) — as it came back: under guardrails, the
// answer they hand over before they check it (core/pipeline/answer-guard.ts), so a hit goes through the same check
// over the same answer. No copy: nothing edits a kept answer (a request whose guardrails redact is not kept; a
// stream's recording holds its own events).
import type { GatewayContext, GatewayResponse } from "../../core/pipeline/context.ts";
import type { StoredResponse } from "../../core/store/types.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
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

/** An answer on its way to be kept: what to pass on in its place, and what keeps it once it has been sent whole. */
export interface Keeping {
  /** The answer to pass on (a stream: recorded as it is read). */
  response: GatewayResponse;
  /** Keeps it (a stream: its recording, when it reached its protocol's normal end). Undefined: nothing to keep. */
  save?: () => void;
}

/**
 * The answer `r` on its way to be kept. `save` is the caller's to call once the answer the client gets is through
 * (keepOnceSent): the guardrails after the recording may still refuse it — a JSON answer as the request returns, a
 * stream at its very end (output moderation and allow rules judge the whole answer, on Gemini after the provider's
 * stream has ended).
 */
export function keeping(ctx: GatewayContext, key: string, plan: CachePlan, state: CacheState, r: GatewayResponse): Keeping {
  if (r.kind === "stream") {
    if (r.status < 200 || r.status >= 300) return { response: r };
    const headers = answerHeaders(ctx);
    let put: ((key: string) => void) | undefined;
    // The recording holds its own events (each a new object): what a step does to the events it passes on is not in it.
    const events = recordStream(r.events, {
      maxBytes: state.settings.maxEntryBytes,
      done: (events) => {
        if (!events) state.metrics.writes.add(1, ctx.endpoint, "too_large");
        else if (completeStream(ctx.protocol, events)) put = entryFor(ctx, plan, state, { kind: "stream", status: r.status, headers, events });
      },
      failed: () => {},
    });
    return { response: { ...r, events }, save: () => put?.(key) };
  }
  if (!keepsJson(r, ctx.endpoint)) return { response: r };
  const put = entryFor(ctx, plan, state, { kind: "json", status: r.status, headers: answerHeaders(ctx), body: r.body });
  return { response: r, save: put && (() => put(key)) };
}

/**
 * Keeps `kept` once the answer in ctx.response (what the client gets, the guardrails' verdicts in it) is through: a
 * JSON one now (one they refused threw before this), a stream once it has ended without being cut — not when the
 * provider's stream ended, which on Gemini is before the guardrails' last check.
 */
export function keepOnceSent(ctx: GatewayContext, kept: Keeping): void {
  const save = kept.save;
  if (!save) return;
  const r = ctx.response;
  if (r?.kind !== "stream") return save();
  ctx.response = { ...r, events: savedAtEnd(r.events, save) };
}

async function* savedAtEnd(events: AsyncIterable<SseEvent>, save: () => void): AsyncGenerator<SseEvent> {
  yield* events;
  save(); // not reached when the stream throws (cut) or the client leaves (return)
}

/**
 * The entry for `response`, made now: its text, what the store gets. Undefined (counted) when it is too large to keep.
 * Returns what keeps it under a key.
 */
function entryFor(ctx: GatewayContext, plan: CachePlan, state: CacheState, response: StoredResponse): ((key: string) => void) | undefined {
  const now = Date.now();
  const entry: CacheEntry = { v: 1, storedAt: now, expiresAt: now + plan.ttlMs, response, model: ctx.resolvedTarget?.modelId };
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
