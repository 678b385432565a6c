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
// hit or not). The guardrails, which run after it, see a hit as they see a miss (guarded-hit.ts): the answer is kept as
// it came back, before they checked it (keep.ts), and a request they redact is neither answered from the cache nor kept.
// The store failing costs the cache, never the request: a lookup that fails is a miss, an answer that cannot be kept
// is still sent.
import { definePlugin } from "../../core/pipeline/define.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { StoredResponse } from "../../core/store/types.ts";
import { replayStored, storedBytes } from "../../core/pipeline/stored-response.ts";
import { meterFor } from "../../core/metering/meter.ts";
import { cacheKey } from "./key.ts";
import { planOf, settingsOf, type CachePlan } from "./plan.ts";
import { frontFor } from "./front.ts";
import { parseEntry, type CacheEntry } from "./entry.ts";
import { cacheMetrics } from "./metrics.ts";
import { keepOnceSent, keeping, type CacheState, type Keeping } from "./keep.ts";
import { replayable } from "../../core/responses/replayable.ts";
import { responseOwner } from "../../core/responses/owner.ts";
import { answerGuard, checkAround, tapAnswerBeforeCheck, type AnswerGuard } from "../../core/pipeline/answer-guard.ts";
import { guardedHit } from "./guarded-hit.ts";
import { toServe } from "./copy.ts";
import { keptByModelInService } from "./in-service.ts";

export const CACHE_HEADER = "x-mg-cache";
type State = CacheState;

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
    // The guardrails after the cache, if any: a hit is made inside them. Or those placed before it, which check what
    // it answers. A request they redact is not the cache's: a kept answer would hold the values they keep out of stores
    // (raw) or could not be checked on a hit as on the miss (masked), so it goes on as one the cache never saw.
    const guard = answerGuard(ctx);
    const check = guard ?? checkAround(ctx);
    if (check?.redacts) return next();
    let key: string;
    try {
      key = cacheKey(ctx);
    } catch {
      return next(); // a body nested too deep to walk is not cached
    }
    return cached(ctx, next, plan, key, state, guard, check?.edits === true);
  },
});

async function cached(ctx: GatewayContext, next: () => Promise<void>, plan: CachePlan, key: string, state: State, guard: AnswerGuard | undefined, edited: boolean): Promise<void> {
  const entry = plan.refresh ? undefined : await lookup(ctx, key, state);
  if (entry && (await servable(ctx, entry, plan))) return hit(ctx, entry, plan, state, guard, edited);
  state.metrics.requests.add(1, ctx.endpoint, "miss");
  ctx.responseHeaders[CACHE_HEADER] = "miss";
  if (!guard) {
    // As it comes back (guardrails placed before the cache check it after this, as they check a hit).
    await next();
    if (!ctx.response) return;
    const kept = keeping(ctx, key, plan, state, ctx.response);
    ctx.response = kept.response;
    keepOnceSent(ctx, kept);
    return;
  }
  // The guardrails after the cache hand the answer over before they check it: a hit then goes through the same check
  // over the same answer (a stream: the same events). What they refuse is not kept: a JSON answer throws here, a
  // stream is kept only once the checked one has ended uncut.
  let kept: Keeping | undefined;
  tapAnswerBeforeCheck(ctx, (answer) => (kept = keeping(ctx, key, plan, state, answer)).response);
  await next();
  if (kept) keepOnceSent(ctx, kept);
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
 * A kept answer is served only while what it stands on holds, else the request goes on as a miss: the model that gave
 * it still in service (a fallback retired whole since, in-service.ts), the stored
 * responses a Responses answer names (deleted or expired, the id it would hand out is gone), and a budget with room
 * for the hit price — held by the budget (cover) when it is more than the worst case reserved — so hits never spend
 * past it; the provider's answer costs at most what was reserved.
 */
async function servable(ctx: GatewayContext, entry: CacheEntry, plan: CachePlan): Promise<boolean> {
  if (!keptByModelInService(ctx, entry.model, Date.now())) return false;
  if (ctx.endpoint === "responses") {
    try {
      if (!(await replayable(ctx.gateway.store.responses, responseOwner(ctx), ctx.body, entry.response, Date.now()))) return false;
    } catch (err) {
      ctx.gateway.log.debug("response cache: stored responses unreadable; asking the provider", { requestId: ctx.requestId, error: String(err) });
      return false;
    }
  }
  const hold = ctx.budget;
  return !hold || plan.price.pico <= hold.reservedPico || (await hold.cover?.(plan.price.pico)) === true;
}

async function hit(ctx: GatewayContext, entry: CacheEntry, plan: CachePlan, state: State, guard: AnswerGuard | undefined, edited: boolean): Promise<void> {
  // The guardrails placed after the cache see a hit as they see a miss (guarded-hit.ts). A copy only when guardrails
  // (after the cache or before it) edit the answer in place (a stream's events): the kept entry serves the next hit.
  const response = toServe(entry.response, edited);
  if (guard) return guardedHit(ctx, guard, () => serve(ctx, response, entry, plan, state));
  serve(ctx, response, entry, plan, state);
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

