// Usage and spend (from the ledger reader: grouped by project, key, model, provider, endpoint and time bucket),
// budget state (period, limit, spent, reserved, remaining) per project and per key with a budget of its own, and
// rate-limit state per key and project (the windows read without charging them).
import type { Gateway } from "../gateway.ts";
import type { UsageDimension, UsageRow } from "../contracts/ledger-reader.ts";
import type { KeyBudget, RateLimits } from "../generated/types/gateway.ts";
import { GatewayError, invalidRequest } from "../errors.ts";
import { picoToUsd, toPico } from "../money/money.ts";
import { periodOf } from "../store/periods.ts";
import { usageGroupBy } from "../store/rollup.ts";
import { keyScope } from "../store/key-budget.ts";
import { rateWindows } from "../store/rate-windows.ts";
import type { Period } from "../store/types.ts";
import { boolParam, enumParam, iso, listParam, stringParam, timeParam } from "./query.ts";
import type { AdminAnswer, AdminRequest } from "./route.ts";

const DIMENSIONS = ["project", "key", "model", "provider", "endpoint"] as const;
const MAX_RANGE_MS = 400 * 86_400_000;

function usageRow(r: UsageRow) {
  return {
    ...(r.bucketStart !== undefined ? { bucket_start: iso(r.bucketStart) } : {}),
    group: r.group,
    requests: r.requests, errors: r.errors,
    input_tokens: r.inputTokens, output_tokens: r.outputTokens, cache_read_tokens: r.cacheReadTokens, cache_write_tokens: r.cacheWriteTokens,
    reasoning_tokens: r.reasoningTokens, images: r.images, video_seconds: r.videoSeconds, search_units: r.searchUnits, web_searches: r.webSearches,
    cost_usd: r.costUsd,
  };
}

export async function usage(r: AdminRequest): Promise<AdminAnswer> {
  const q = r.query;
  const now = Date.now();
  const until = timeParam(q, "until", now) ?? now;
  const since = timeParam(q, "since", now) ?? until - 86_400_000;
  if (since >= until) throw invalidRequest("Invalid query parameters: since must be before until", "since");
  if (until - since > MAX_RANGE_MS) throw invalidRequest("Invalid query parameters: the range is longer than 400 days", "since");
  const bucket = enumParam(q, "bucket", ["hour", "day", "none"] as const, "none");
  const filter: Partial<Record<UsageDimension, string>> = {};
  for (const d of DIMENSIONS) {
    const v = stringParam(q, d);
    if (v !== undefined) filter[d] = v;
  }
  // As the reader groups (a key id names one key per project): the answer's group_by says each row names its project.
  const groupBy = usageGroupBy(listParam(q, "group_by", DIMENSIONS), filter);
  const rows = await r.gateway.ledgerReader.usage({ since, until, groupBy, bucket, filter, includeSandbox: boolParam(q, "include_sandbox") });
  let total = 0n;
  let requests = 0;
  for (const row of rows) {
    total += row.costPico;
    requests += row.requests;
  }
  return {
    body: {
      since: iso(Math.floor(since / 3_600_000) * 3_600_000), until: iso(Math.ceil(until / 3_600_000) * 3_600_000), group_by: groupBy, bucket, filter,
      total: { requests, cost_usd: picoToUsd(total) }, rows: rows.map(usageRow),
    },
  };
}

function periodEnd(period: Period, start: number): number | null {
  const d = new Date(start);
  switch (period) {
    case "day": return start + 86_400_000;
    case "week": return start + 7 * 86_400_000;
    case "month": return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    default: return null;
  }
}

async function budgetState(gw: Gateway, scope: string, budget: KeyBudget, now: number) {
  const period = (budget.period ?? "month") as Period;
  const w = periodOf(period, now);
  const limit = toPico(budget.usd);
  const [spent, reserved] = await Promise.all([gw.store.spent(scope, w.key, w.start), gw.store.reserved(scope, w.key, now)]);
  const left = limit - spent - reserved;
  return {
    period, period_start: iso(w.start), resets_at: iso(periodEnd(period, w.start)),
    limit_usd: picoToUsd(limit), spent_usd: picoToUsd(spent), reserved_usd: picoToUsd(reserved), remaining_usd: picoToUsd(left > 0n ? left : 0n),
    exhausted: spent >= limit,
  };
}

/** GET /budgets: every project with a budget, and every key with one of its own (?project narrows). */
export async function budgets(r: AdminRequest): Promise<AdminAnswer> {
  const gw = r.gateway;
  const only = stringParam(r.query, "project");
  if (only && !gw.config.projects.has(only)) throw new GatewayError(404, "NOT_FOUND", `Project ${JSON.stringify(only)} is not declared in gateway.yaml`);
  const now = Date.now();
  const projects = [];
  const keys = [];
  const stored = (await gw.apiKeys.list()).keys;
  for (const [pid, p] of gw.config.projects) {
    if (only && pid !== only) continue;
    projects.push({ project: pid, budget: p.config.budget ? await budgetState(gw, pid, p.config.budget, now) : null });
    for (const k of p.config.keys) if (k.budget) keys.push({ project: pid, key: k.id, source: "yaml", budget: await budgetState(gw, keyScope(pid, k.id), k.budget, now) });
    for (const k of stored) {
      if (k.project === pid && k.budget && k.revokedAt === null) keys.push({ project: pid, key: k.id, source: "api", budget: await budgetState(gw, keyScope(pid, k.id), k.budget, now) });
    }
  }
  return { body: { at: iso(now), projects, keys } };
}

/** GET /rate-limits: each project's own windows and each key's (its rate_limits, or the project's default). */
export async function rateLimits(r: AdminRequest): Promise<AdminAnswer> {
  const gw = r.gateway;
  const only = stringParam(r.query, "project");
  const onlyKey = stringParam(r.query, "key");
  if (only && !gw.config.projects.has(only)) throw new GatewayError(404, "NOT_FOUND", `Project ${JSON.stringify(only)} is not declared in gateway.yaml`);
  const stored = (await gw.apiKeys.list()).keys;
  const now = Date.now();
  const out: unknown[] = [];
  const read = async (scope: "project" | "key", project: string, key: string | undefined, source: string | undefined, own: RateLimits | undefined, projectLimits: RateLimits | undefined) => {
    const ws = rateWindows(project, key, own, projectLimits).filter((w) => w.scope === scope);
    if (!ws.length) return;
    const states = await gw.store.rateState(ws, now);
    out.push({
      scope, project, ...(key !== undefined ? { key, source } : {}),
      windows: ws.map((w, i) => ({ name: w.token ? "tpm" : "rpm", limit: w.limit, remaining: states[i]!.remaining, reset_ms: Math.ceil(states[i]!.resetMs) })),
    });
  };
  for (const [pid, p] of gw.config.projects) {
    if (only && pid !== only) continue;
    const c = p.config;
    if (!onlyKey) await read("project", pid, undefined, undefined, undefined, c.project_rate_limits);
    for (const k of c.keys) if (!onlyKey || k.id === onlyKey) await read("key", pid, k.id, "yaml", k.rate_limits ?? c.rate_limits, undefined);
    for (const k of stored) {
      if (k.project !== pid || k.revokedAt !== null || (onlyKey && k.id !== onlyKey)) continue;
      await read("key", pid, k.id, "api", k.rateLimits ?? c.rate_limits, undefined);
    }
  }
  return { body: { at: iso(now), limits: out } };
}
