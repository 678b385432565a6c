// budget: a project's spend cap (usd per day, week, month or total; calendar periods in UTC). Before dispatch the
// request's worst-case cost is reserved; afterwards the reservation is settled to the real cost in the same
// atomic store call that writes the ledger record (or released when nothing was billed). Concurrent requests can
// therefore overspend by at most what they reserved. Sandbox (mg_test_) traffic never touches a budget.
// count_tokens costs nothing, so nothing is reserved for it; but once a project's recorded spend has reached its
// budget it is refused with the same 402 as a generation (issue 25: a spent key could still make the gateway count).
// In-flight holds do not count against it: they may yet settle for less.
import { definePlugin } from "../../core/pipeline/define.ts";
import { GatewayError } from "../../core/errors.ts";
import { periodOf } from "../../core/store/periods.ts";
import { picoToUsd, toPico } from "../../core/money/money.ts";
import type { Period } from "../../core/store/types.ts";
import { meterFor } from "../../core/metering/meter.ts";
import { worstCasePico } from "./worst-case.ts";
import { boundWebSearches } from "../../core/metering/server-tools.ts";

/** A reservation a crashed replica never settled is freed after this long (longer than any request may run). */
const LEASE_MS = 15 * 60_000;

function periodEnd(period: Period, start: number): string | undefined {
  const d = new Date(start);
  switch (period) {
    case "day": return new Date(start + 86_400_000).toISOString();
    case "week": return new Date(start + 7 * 86_400_000).toISOString();
    case "month": return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();
    default: return undefined;
  }
}

const limits = new WeakMap<object, bigint>();

/** The 402 a request gets when the project's budget has no room for it. */
function exceeded(project: string, usd: string, period: Period, start: number, limitPico: bigint, spentPico: bigint, reservedPico: bigint, amountPico: bigint): GatewayError {
  const resets = periodEnd(period, start);
  const left = limitPico - spentPico - reservedPico;
  return new GatewayError(402, "BUDGET_EXCEEDED",
    `Project "${project}" has reached its ${period === "total" ? "total" : `${period}ly`} budget of $${usd}` +
      ` (spent $${picoToUsd(spentPico)}, $${picoToUsd(reservedPico)} held by requests in flight)` +
      (amountPico > 0n ? `; this request may cost up to $${picoToUsd(amountPico)}` : ""),
    {
      details: {
        project, period, budget_usd: usd, spent_usd: picoToUsd(spentPico), reserved_usd: picoToUsd(reservedPico),
        available_usd: picoToUsd(left > 0n ? left : 0n), request_max_usd: picoToUsd(amountPico), ...(resets ? { resets_at: resets } : {}),
      },
    });
}

export default definePlugin({
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
  },
  async handle(ctx, next) {
    const auth = ctx.auth;
    const budget = auth?.project.config.budget;
    if (!auth || auth.sandbox || !budget || ctx.body === undefined) return next();
    const period = (budget.period ?? "month") as Period;
    const now = Date.now();
    const window = periodOf(period, now);
    let limitPico = limits.get(budget);
    if (limitPico === undefined) limits.set(budget, (limitPico = toPico(budget.usd)));
    if (ctx.endpoint === "count_tokens") {
      // Never billed: no reservation, only the check that the budget is not used up.
      const spent = await ctx.gateway.store.spent(auth.projectId, window.key, window.start);
      if (spent >= limitPico) throw exceeded(auth.projectId, budget.usd, period, window.start, limitPico, spent, 0n, 0n);
      return next();
    }
    // Web search without a limit of its own gets one, so the reservation is a true ceiling (the upstream enforces it).
    const searches = ctx.endpoint === "messages" || ctx.endpoint === "responses" ? boundWebSearches(ctx.body, ctx.endpoint) : 0;
    const amountPico = worstCasePico(ctx, searches);
    // Plain object literals, no spread: a spread copy is a slow path on every budgeted request.
    const r = await ctx.gateway.store.reserve(
      { project: auth.projectId, periodKey: window.key, periodStart: window.start, id: ctx.generationId, amountPico, limitPico, leaseMs: LEASE_MS }, now);
    if (!r.ok) throw exceeded(auth.projectId, budget.usd, period, window.start, limitPico, r.spentPico, r.reservedPico, amountPico);
    ctx.budget = { project: auth.projectId, periodKey: window.key, id: ctx.generationId, reservedPico: amountPico, settled: false };
    // Settles through the ledger write (usage-metering usually did it already; commit runs once).
    ctx.onFinish((outcome) => meterFor(ctx).commit(outcome));
    return next();
  },
});
