// response-cache: exact-match caching of answers (chat, messages, responses, Gemini generateContent, embeddings,
// rerank), opted into by the project (projects.<id>.cache) and the request (providerOptions.gateway.cache, with a
// ttl) — or by the project for every request (mode: always). The key (key.ts) names the project and every field that
// changes the answer; answers live in the configured store (SQLite, Redis; memory) behind a small in-process front.
// A hit replays the answer as it was sent — a stream as the same events in the client's protocol — with
// `x-mg-cache: hit`, `age` and `x-mg-provider: cache`, never reaches a provider, and is one ledger record (provider
// "cache", cacheHit) at the hit price (default 0). It runs after the policies: a hit is one request to the rate
// limits (its token estimate given back) and holds a budget reservation settled at the hit price (raised to it first
// when the worst case held is less: no room, no hit); a Responses answer is replayed only while the stored responses
// it names are; an idempotency key keeps its own meaning (a keyed retry replays exactly what the key first answered,
// hit or not). The guardrails, which run after it, see a hit as they see a miss (guarded-hit.ts). The store failing
// costs the cache, never the request: a lookup that fails is a miss, an answer that cannot be kept is still sent.
import { definePlugin } from "../../core/pipeline/define.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { StoredResponse } from "../../core/store/types.ts";
import { recordStream, replayStored, storedBytes } from "../../core/pipeline/stored-response.ts";
import { meterFor } from "../../core/metering/meter.ts";
import { DROPPED_PARAMS_HEADER } from "../../core/contracts/provider.ts";
import { cacheKey } from "./key.ts";
import { planOf, settingsOf, type CachePlan, type CacheSettings } from "./plan.ts";
import { completeStream, keepsJson } from "./answer.ts";
import { frontFor, type Front } from "./front.ts";
import { parseEntry, type CacheEntry } from "./entry.ts";
import { cacheMetrics, type CacheMetrics } from "./metrics.ts";
import { replayable } from "../../core/responses/replayable.ts";
import { answerGuard } from "../../core/pipeline/answer-guard.ts";
import { guardedHit } from "./guarded-hit.ts";

export const CACHE_HEADER = "x-mg-cache";
/** Headers that describe the answer itself, replayed with it (not rate-limit headers: those are the new request's). */
const ANSWER_HEADERS = ["x-mg-upstream-model", DROPPED_PARAMS_HEADER, "x-mg-upstream-request-id"];

interface State {
  settings: CacheSettings;
  front?: Front;
  metrics: CacheMetrics;
}

export default definePlugin<unknown, State>({
  name: "response-cache",
  dependsOn: ["auth"],
  setup(gateway, _options, config) {
    const settings = settingsOf(config.raw.cache);
    gateway.store.responseCache.setMaxBytes(settings.maxBytes);
    return { settings, front: frontFor(gateway, settings.memoryBytes), metrics: cacheMetrics(gateway.metrics.registry) };
  },
  // Not async: a request that does not use the cache (most of them) goes straight on.
  handle(ctx, next, { state }) {
    const plan = planOf(ctx, state.settings);
    if (!plan) return next();
    let key: string;
    try {
      key = cacheKey(ctx);
    } catch {
      return next(); // a body nested too deep to walk is not cached
    }
    return cached(ctx, next, plan, key, state);
  },
});

async function cached(ctx: GatewayContext, next: () => Promise<void>, plan: CachePlan, key: string, state: State): Promise<void> {
  const entry = plan.refresh ? undefined : await lookup(ctx, key, state);
  if (entry && (await servable(ctx, entry, plan))) return hit(ctx, entry, plan, state);
  state.metrics.requests.add(1, ctx.endpoint, "miss");
  ctx.responseHeaders[CACHE_HEADER] = "miss";
  await next();
  keep(ctx, key, plan, state);
}

/** The front, then the store; a store that fails or holds something unreadable is a miss. */
async function lookup(ctx: GatewayContext, key: string, state: State): Promise<CacheEntry | undefined> {
  const now = Date.now();
  const front = state.front?.get(key, now);
  if (front) return front;
  let text: string | undefined;
  try {
    text = await ctx.gateway.store.responseCache.get(key, now);
  } catch (err) {
    // The guard has marked the store and logged the outage once; here it only costs the cache.
    ctx.gateway.log.debug("response cache lookup failed; asking the provider", { requestId: ctx.requestId, error: String(err) });
    return undefined;
  }
  if (text === undefined) return undefined;
  const entry = parseEntry(text);
  if (!entry || entry.expiresAt <= now) return undefined;
  state.front?.set(key, entry, storedBytes(text), now);
  return entry;
}

/**
 * A kept answer is served only while what it stands on holds, else the request goes on as a miss: the stored
 * responses a Responses answer names (deleted or expired, the id it would hand out is gone), and a budget with room
 * for the hit price — held by the budget (cover) when it is more than the worst case reserved — so hits never spend
 * past it; the provider's answer costs at most what was reserved.
 */
async function servable(ctx: GatewayContext, entry: CacheEntry, plan: CachePlan): Promise<boolean> {
  if (ctx.endpoint === "responses") {
    try {
      if (!(await replayable(ctx.gateway.store.responses, ctx.auth!.projectId, ctx.body, entry.response, Date.now()))) return false;
    } catch (err) {
      ctx.gateway.log.debug("response cache: stored responses unreadable; asking the provider", { requestId: ctx.requestId, error: String(err) });
      return false;
    }
  }
  const hold = ctx.budget;
  return !hold || plan.price.pico <= hold.reservedPico || (await hold.cover?.(plan.price.pico)) === true;
}

async function hit(ctx: GatewayContext, entry: CacheEntry, plan: CachePlan, state: State): Promise<void> {
  // The guardrails placed after the cache see a hit as they see a miss (guarded-hit.ts); on a copy, since they edit
  // the answer in place and the kept entry serves the next hit.
  const guard = answerGuard(ctx);
  if (guard) return guardedHit(ctx, guard, () => serve(ctx, copied(entry.response), entry, plan, state));
  serve(ctx, entry.response, entry, plan, state);
  // The ledger record (which settles the budget's hold at the hit price) is written before the answer goes out, as
  // every answer's is.
  await meterFor(ctx).commit({ status: entry.response.status, aborted: false });
}

function serve(ctx: GatewayContext, response: StoredResponse, entry: CacheEntry, plan: CachePlan, state: State): void {
  state.metrics.requests.add(1, ctx.endpoint, "hit");
  ctx.cacheHit = { costUsd: plan.price.usd, costPico: plan.price.pico };
  // Who served it, in the headers, the access log, traces and the request series: the cache, not a provider.
  ctx.resolvedProvider = "cache";
  Object.assign(ctx.responseHeaders, entry.response.headers, {
    [CACHE_HEADER]: "hit",
    age: String(Math.max(0, Math.floor((Date.now() - entry.storedAt) / 1000))),
    "x-mg-cost-usd": plan.price.usd,
  });
  ctx.response = replayStored(response);
}

function copied(response: StoredResponse): StoredResponse {
  if (response.kind === "json") return { ...response, body: structuredClone(response.body) };
  if (response.kind === "stream") return { ...response, events: response.events.map((e) => ({ ...e })) };
  return response;
}

function answerHeaders(ctx: GatewayContext): Record<string, string> {
  const h: Record<string, string> = { "x-mg-original-request-id": ctx.requestId };
  for (const name of ANSWER_HEADERS) {
    const v = ctx.responseHeaders[name];
    if (v !== undefined) h[name] = v;
  }
  return h;
}

/** After a miss: keep a whole, successful answer — a JSON one now, a stream once it has ended normally. */
function keep(ctx: GatewayContext, key: string, plan: CachePlan, state: State): void {
  const r = ctx.response;
  if (!r) return;
  if (r.kind === "stream") {
    if (r.status < 200 || r.status >= 300) return;
    const headers = answerHeaders(ctx);
    ctx.response = {
      ...r,
      events: recordStream(r.events, {
        maxBytes: state.settings.maxEntryBytes,
        done: (events) => {
          if (!events) state.metrics.writes.add(1, ctx.endpoint, "too_large");
          else if (completeStream(ctx.protocol, events)) save(ctx, key, plan, state, { kind: "stream", status: r.status, headers, events });
        },
        failed: () => {},
      }),
    };
    return;
  }
  if (keepsJson(r, ctx.endpoint)) save(ctx, key, plan, state, { kind: "json", status: r.status, headers: answerHeaders(ctx), body: r.body });
}

/** Into the front at once, into the store in the background: the client never waits for the cache. */
function save(ctx: GatewayContext, key: string, plan: CachePlan, state: State, response: StoredResponse): void {
  const now = Date.now();
  const entry: CacheEntry = { v: 1, storedAt: now, expiresAt: now + plan.ttlMs, response };
  let text: string;
  try {
    text = JSON.stringify(entry);
  } catch {
    return; // nothing a provider sends fails here; the answer itself has gone out either way
  }
  const bytes = storedBytes(text);
  if (bytes > state.settings.maxEntryBytes) {
    state.metrics.writes.add(1, ctx.endpoint, "too_large");
    return;
  }
  state.front?.set(key, entry, bytes, now);
  const endpoint = ctx.endpoint;
  ctx.gateway.store.responseCache.put(key, text, plan.ttlMs, now).then(
    () => state.metrics.writes.add(1, endpoint, "stored"),
    (err) => {
      state.metrics.writes.add(1, endpoint, "failed");
      // An outage is logged once by the store's guard; this only says which answer it cost.
      ctx.gateway.log.debug("response cache: answer not kept", { requestId: ctx.requestId, error: String(err) });
    },
  );
}
