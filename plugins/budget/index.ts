// budget: a project's spend cap (usd per day, week, month or total; calendar periods in UTC). Before dispatch the
// request's worst-case cost is reserved; afterwards the reservation is settled to the real cost in the same
// atomic store call that writes the ledger record (or released when nothing was billed). Concurrent requests can
// therefore overspend by at most what they reserved. Sandbox (mg_test_) traffic never touches a budget.
// count_tokens costs nothing, so nothing is reserved for it; but once a project's recorded spend has reached its
// budget it is refused with the same 402 as a generation (issue 25: a spent key could still make the gateway count).
// In-flight holds do not count against it: they may yet settle for less.
// A key may have a budget of its own (`budget:` on the key in gateway.yaml, or given when it was created through the
// admin API): the same reservation is then also made against the key's scope (core/store/key-budget.ts), and the
// request is refused when either has no room. The ledger record settles one of the two holds; the other is released
// right after it (the key's spend counts the cost from the record on, so it is never under-counted meanwhile), before
// the answer completes (a client's next request never finds it still held).
// A response-cache hit is billed at a set price, which may be more than the worst case held: before it is served it
// asks for the difference (ctx.budget.cover), held under an id of its own on every scope and given back once the hit's
// record has landed; with no room the cache does not serve it, so hits never spend past the budget either.
// A keyed /videos request whose key a job already holds (running, or finished and billed) only collects that job, so
// nothing is reserved up front (a full budget must not refuse a video already paid for); should it have to start a
// job after all, the videos endpoint makes the reservation first (ctx.reserveSkipped). Likewise a keyed request of
// another endpoint that the budget would refuse is let through unreserved when its key holds a finished answer for
// the same body, which the idempotency plugin after this one replays billing nothing (the images whose cost spent
// the budget can still be collected); the idempotency plugin makes the reservation should it have to run the request
// after all. The key is looked up only then (a request the budget has room for reserves and goes on, no extra store
// call), and only when nothing between the two plugins can answer or bill (./replay-skip.ts).
import { definePlugin } from "../../core/pipeline/define.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import { GatewayError, toGatewayError } from "../../core/errors.ts";
import { periodOf } from "../../core/store/periods.ts";
import { toPico } from "../../core/money/money.ts";
import type { Period, Settlement } from "../../core/store/types.ts";
import type { KeyBudget } from "../../core/generated/types/gateway.ts";
import { keyScope } from "../../core/store/key-budget.ts";
import { meterFor, type BudgetHold } from "../../core/metering/meter.ts";
import type { Store } from "../../core/store/types.ts";
import { worstCase, type WorstCase } from "./worst-case.ts";
import { budgetRefusal } from "./refusal.ts";
import { boundWebSearches } from "../../core/metering/server-tools.ts";
import { videoJobTimeoutMs } from "../../core/endpoints/video-job-timeout.ts";
import { videoKeyTaken } from "../../core/endpoints/video-key.ts";
import { replaysKeptAnswer } from "../../core/http/idempotent-replay.ts";
import { replaySkipsReservation } from "./replay-skip.ts";
import { LeaseRenewal } from "../../core/store/lease-renewal.ts";
import type { LeaseRenewal as Lease } from "../../core/store/types.ts";

/**
 * A reservation a crashed replica never settled is freed after this long. A live request's holds are renewed every
 * RENEW_EVERY_MS however long it runs (a stream is bounded only between its chunks), so only a dead process's lapse.
 */
const LEASE_MS = 15 * 60_000;
const RENEW_EVERY_MS = LEASE_MS / 3;

/** Per store: the holds this process's requests have not settled yet, renewed in one batch per sweep. */
const renewals = new WeakMap<Store, LeaseRenewal<Holds>>();

/** The renewal of this process's budget holds on `store` (exported for tests, which sweep it themselves). */
export function budgetLeases(store: Store): LeaseRenewal<Holds> {
  let r = renewals.get(store);
  if (!r) {
    r = new LeaseRenewal<Holds>(RENEW_EVERY_MS, (holds) => store.renewHolds(holds.flatMap((h) => h.leases()), Date.now()), {
      live: (h) => !h.settled,
    });
    renewals.set(store, r);
  }
  return r;
}

/**
 * How long this request's holds are leased. A video job carries the starting request's hold and settles it when it
 * ends, up to job_timeout_seconds later (default 30 min): a 15-minute lease lapsed under a running job and let a
 * second one past the budget. So a video request's hold lives as long as its job can, plus the usual lease for the
 * record's write; still a lease, so a replica that dies mid-job frees it. (A request that only attaches to a running
 * job gives its hold back when it answers, as any other.)
 */
function leaseMsOf(ctx: GatewayContext): number {
  if (ctx.endpoint !== "videos") return LEASE_MS;
  const model = typeof ctx.body?.model === "string" ? ctx.config.models.get(ctx.body.model) : undefined;
  return model ? videoJobTimeoutMs(model) + LEASE_MS : LEASE_MS;
}

const limits = new WeakMap<object, bigint>();

interface BudgetState {
  /**
   * The idempotency plugin runs after this one with nothing between that could answer or bill (./replay-skip.ts): a
   * key's kept answer is replayed without reaching a provider, so a refused request that only replays one goes on.
   */
  replaysAfter: boolean;
}

/** A refusal of the budget (not a store failure), which a replay of a kept answer need not obey. */
const isBudgetRefusal = (err: unknown) => err instanceof GatewayError && err.code === "BUDGET_EXCEEDED";

export default definePlugin<unknown, BudgetState>({
  name: "budget",
  dependsOn: ["auth"],
  // Each budgeted project's spend this period is read before the config serves: on a SQLite store the first read
  // sums the period's ledger, which on a large ledger held the event loop for a second on the first request.
  // Only a warm-up: a store that cannot answer now (Redis down at a reload) is read again by the first request.
  async setup(gateway, _options, config) {
    const now = Date.now();
    for (const [id, project] of config.projects) {
      const budget = project.config.budget;
      if (!budget) continue;
      const window = periodOf((budget.period ?? "month") as Period, now);
      try {
        await gateway.store.spent(id, window.key, window.start);
      } catch (err) {
        gateway.log.warn("budget: could not read the spend ahead of the first request", { project: id, error: String(err) });
      }
    }
    return { replaysAfter: replaySkipsReservation(config) };
  },
  async handle(ctx, next, { state }) {
    const auth = ctx.auth;
    const budget = auth?.project.config.budget;
    const keyBudget = auth?.key?.budget;
    if (!auth || auth.sandbox || (!budget && !keyBudget) || ctx.body === undefined) return next();
    const now = Date.now();
    const scopes: Scope[] = [];
    if (budget) scopes.push(scopeOf(auth.projectId, budget, now));
    if (keyBudget) scopes.push(scopeOf(keyScope(auth.projectId, auth.keyId), keyBudget, now, auth.keyId, auth.projectId));
    const store = ctx.gateway.store;
    if (ctx.endpoint === "count_tokens") {
      // Never billed: no reservation, only the check that the budget is not used up.
      for (const s of scopes) {
        const spent = await store.spent(s.scope, s.window.key, s.window.start);
        if (spent >= s.limitPico) throw s.exceeded(ctx, spent, 0n, { pico: 0n });
      }
      return next();
    }
    // Web search without a limit of its own gets one, so the reservation is a true ceiling (the upstream enforces it).
    const searches = ctx.endpoint === "messages" || ctx.endpoint === "responses" || ctx.endpoint === "chat" ? boundWebSearches(ctx.body, ctx.endpoint) : 0;
    const worst = worstCase(ctx, searches);
    const leaseMs = leaseMsOf(ctx);
    let holds: Holds | undefined;
    // Nothing reserved now, for a request that only collects what its key holds: made here should it run after all.
    // Kept in `holds`, so what a cache hit adds to it (cover) is given back below as for any other request.
    const skip = () => {
      ctx.reserveSkipped = async () => {
        ctx.reserveSkipped = undefined;
        holds = await reserve(ctx, scopes, worst, leaseMs, Date.now());
      };
    };
    if (ctx.endpoint === "videos" && (await videoKeyTaken(ctx))) skip();
    else {
      try {
        holds = await reserve(ctx, scopes, worst, leaseMs, now);
      } catch (err) {
        if (!(state?.replaysAfter && isBudgetRefusal(err) && (await replaysKeptAnswer(ctx)))) throw err;
        skip();
      }
    }
    // Settles through the ledger write (usage-metering usually did it already; commit runs once). Settled holds leave
    // the renewal here; those a video job carries on are settled by it and dropped at the next sweep.
    ctx.onFinish((outcome) => meterFor(ctx).commit(outcome).finally(() => {
      const h = ctx.budget;
      if (h instanceof Holds && h.settled) budgetLeases(store).delete(h);
    }));
    // Answered or refused without a provider (an idempotent replay; rate limited, not routable...): nothing more can
    // be billed, so the holds go back before the answer is sent and the client's next request never finds them held.
    try {
      try {
        await next();
      } catch (e) {
        const err = toGatewayError(e, ctx.signal);
        await meterFor(ctx).commit({ status: err.status, error: err, aborted: ctx.signal.aborted });
        throw e;
      }
      // (A stream's attempts may still be ahead of it, unless it is a kept one replayed, as may an MCP transport's:
      // those settle when they end.)
      const r = ctx.response;
      if (ctx.attempts.length === 0 && r && (r.kind === "json" || r.kind === "bytes" || (r.kind === "stream" && r.stored))) {
        await meterFor(ctx).commit({ status: r.status, aborted: false });
      }
    } finally {
      // Covered answers are recorded by now (a hit's record is written before it is served): the spend counts them.
      if (holds?.extra) await holds.releaseExtra();
    }
  },
});

/** Hold the worst case on every scope for this request (ctx.budget), or none and the scope's 402. */
async function reserve(ctx: GatewayContext, scopes: Scope[], worst: WorstCase, leaseMs: number, at: number): Promise<Holds> {
  const store = ctx.gateway.store;
  const amountPico = worst.pico;
  const held: Settlement[] = [];
  try {
    for (const s of scopes) {
      // Plain object literals, no spread: a spread copy is a slow path on every budgeted request.
      const r = await store.reserve(
        { project: s.scope, periodKey: s.window.key, periodStart: s.window.start, id: ctx.generationId, amountPico, limitPico: s.limitPico, leaseMs, at: s.at }, at);
      if (!r.ok) throw s.exceeded(ctx, r.spentPico, r.reservedPico, worst);
      held.push({ project: s.scope, periodKey: s.window.key, id: ctx.generationId });
    }
  } catch (err) {
    for (const h of held) await store.release(h); // never fails: one the store cannot take now is made later
    throw err;
  }
  // Charged to the periods its windows were chosen in (a job started later still spends the windows it checked).
  const holds = new Holds(held[0]!, amountPico, scopes, store, scopes[0]!.at, leaseMs);
  // A second hold (the key's, when the project has a budget too) is given back by the same commit, once the record
  // counts the cost.
  if (held[1]) holds.also = held[1];
  ctx.budget = holds;
  budgetLeases(store).add(holds);
  return holds;
}

/**
 * A request's holds (ctx.budget). A class, so that cover() is a method and not closures made for every budgeted
 * request: those (cover and reserve over the handler's variables) measured ~10 % more CPU per request in
 * `bench:load` (issue 32).
 */
class Holds implements BudgetHold {
  readonly project: string;
  readonly periodKey: string;
  readonly id: string;
  settled = false;
  also?: Settlement;
  /** What cover() added, under ids of their own: given back once the request's record has landed. */
  extra?: Settlement[];

  constructor(first: Settlement, public reservedPico: bigint, private readonly scopes: Scope[], private readonly store: Store, readonly at: number,
    private readonly leaseMs: number) {
    this.project = first.project;
    this.periodKey = first.periodKey;
    this.id = first.id;
  }

  /** Every hold of the request, as the renewal sweep leases them again. */
  leases(): Lease[] {
    const out: Lease[] = [{ project: this.project, periodKey: this.periodKey, id: this.id, leaseMs: this.leaseMs }];
    if (this.also) out.push({ ...this.also, leaseMs: this.leaseMs });
    for (const e of this.extra ?? []) out.push({ ...e, leaseMs: LEASE_MS });
    return out;
  }

  /**
   * Hold `pico - reserved` more on every scope, under an id of its own (the record settles the first hold), or nothing
   * and false when one has no room: the caller then does not serve the set-price answer.
   */
  async cover(pico: bigint): Promise<boolean> {
    const more = pico - this.reservedPico;
    if (more <= 0n) return true;
    const extra = (this.extra ??= []);
    const id = `${this.id}+${extra.length}`;
    const taken: Settlement[] = [];
    for (const s of this.scopes) {
      const r = await this.store.reserve(
        { project: s.scope, periodKey: s.window.key, periodStart: s.window.start, id, amountPico: more, limitPico: s.limitPico, leaseMs: LEASE_MS, at: s.at }, Date.now());
      if (!r.ok) {
        for (const h of taken) await this.store.release(h);
        return false;
      }
      taken.push({ project: s.scope, periodKey: s.window.key, id });
    }
    extra.push(...taken);
    this.reservedPico = pico;
    return true;
  }

  async releaseExtra(): Promise<void> {
    const extra = this.extra ?? [];
    this.extra = undefined;
    for (const h of extra) await this.store.release(h);
  }
}

interface Scope {
  scope: string;
  /** When `window` was chosen: the record charges its cost to the periods containing it. */
  at: number;
  window: { key: string; start: number };
  limitPico: bigint;
  exceeded(ctx: GatewayContext, spent: bigint, reserved: bigint, worst: WorstCase): GatewayError;
}

function scopeOf(scope: string, budget: KeyBudget, now: number, keyId?: string, project = scope): Scope {
  const period = (budget.period ?? "month") as Period;
  const window = periodOf(period, now);
  let limitPico = limits.get(budget);
  if (limitPico === undefined) limits.set(budget, (limitPico = toPico(budget.usd)));
  const limit = limitPico;
  return {
    scope, at: now, window, limitPico: limit,
    exceeded: (ctx, spentPico, reservedPico, worst) => budgetRefusal({
      project, key: keyId, usd: budget.usd, period, periodStart: window.start, limitPico: limit, spentPico, reservedPico, amountPico: worst.pico,
      withoutOutputPico: worst.withoutOutputPico, inputPrice: worst.inputPrice, webSearches: worst.webSearches, modelTurns: worst.modelTurns,
      modelCalls: worst.modelCalls, limitField: worst.limitField,
    }, ctx),
  };
}
