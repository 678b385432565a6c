// Admin routes the operator console needs beyond the others (docs/console.md, "Admin routes added for the
// console"): who the key is (its scope decides what the console offers), live traffic over the last hour (request
// rate, errors, latency and time-to-first-token percentiles: the ledger's rollups carry no percentiles and nothing
// finer than an hour), and what the config has loaded. Each reads state the gateway keeps anyway; none adds work to
// a request.
import type { AdminAnswer, AdminRequest, AdminRoute } from "./route.ts";
import { intParam, iso } from "./query.ts";
import { TRAFFIC_POINTS, TRAFFIC_STEP_MS, trafficOf } from "./traffic-sampler.ts";
import { statsOf } from "../stats/index.ts";
import { percentiles } from "../stats/histogram.ts";
import { MINUTE_SLOT_MS } from "../stats/window.ts";
import { reloadView } from "./reload-view.ts";
import { retirementMark } from "../config/retirement.ts";
import type { ModelRuntime } from "../config/runtime.ts";

async function whoami(r: AdminRequest): Promise<AdminAnswer> {
  return { body: { id: r.admin.id, scope: r.admin.scope, expires_at: iso(r.admin.expiresAt) } };
}

async function traffic(r: AdminRequest): Promise<AdminAnswer> {
  const after = intParam(r.query, "after", 0, Number.MAX_SAFE_INTEGER, 0);
  const sampler = trafficOf(r.gateway);
  const now = Date.now();
  const ttft = statsOf(r.gateway).ttftSlots(now).map((s) => ({ t: s.start, ...(percentiles(s.counts) ?? { p50: null, p95: null }), count: [...s.counts.values()].reduce((a, b) => a + b, 0) }));
  return {
    body: {
      at: iso(now),
      scope: sampler.scope,
      pid: process.pid,
      step_ms: TRAFFIC_STEP_MS,
      window_ms: TRAFFIC_POINTS * TRAFFIC_STEP_MS,
      sampling_since: iso(sampler.startedAt),
      points: sampler.points(after),
      ttft: { slot_ms: MINUTE_SLOT_MS, points: ttft },
    },
  };
}

/** Process start, to the second: the config in force was loaded then, unless a reload came since. */
const STARTED_AT = Math.floor((Date.now() - performance.now()) / 1000) * 1000;

/** A model's configured endpoints with a `retires:` day, marked retired from that day (absent when it has none). */
function retiringOf(m: ModelRuntime, now: number): { retiring?: { provider: string; upstream_model: string; retires: string; retired: boolean }[] } {
  const retiring = m.endpoints.flatMap((e) => {
    const mark = retirementMark(m, e.provider, e.upstreamModel, now);
    return mark ? [{ provider: e.provider, upstream_model: e.upstreamModel, ...mark }] : [];
  });
  return retiring.length ? { retiring } : {};
}

async function configLoaded(r: AdminRequest): Promise<AdminAnswer> {
  const gw = r.gateway;
  const c = gw.config;
  const now = Date.now();
  const thirdParty = c.raw.plugins ?? {};
  return {
    body: {
      file: c.file,
      started_at: iso(STARTED_AT),
      last_reload: reloadView(gw.lastReload),
      pipeline: c.pipeline.map((p) => ({ name: p.name, source: Object.hasOwn(thirdParty, p.name) ? "plugin" : "builtin", ...(Object.hasOwn(thirdParty, p.name) ? { module: thirdParty[p.name]!.module } : {}) })),
      providers: [...new Set([...c.providers.keys(), ...c.disabledProviders.keys()])].sort().map((name) => {
        const why = c.disabledProviders.get(name);
        return { name, protocol: (c.providers.get(name) ?? c.raw.providers?.[name])?.protocol ?? null, enabled: !why, ...(why ? { disabled_reason: why } : {}) };
      }),
      models: [...c.models.values()].map((m) => ({ id: m.id, type: m.type, endpoints: m.endpoints.map((e) => e.provider), ...retiringOf(m, now) })),
      projects: [...c.projects.entries()].map(([id, p]) => ({
        id, keys: p.config.keys?.length ?? 0, budget: p.config.budget ?? null, rate_limits: p.config.rate_limits ?? null,
        allow_models: p.config.allow_models ?? null,
      })),
      admin_keys: [...c.adminKeys.values()].map((k) => ({ id: k.id, scope: k.scope, expires_at: iso(k.expiresAt), revoked: k.revoked })),
      mcp_servers: Object.keys(c.raw.mcp_servers ?? {}),
    },
  };
}

export const consoleRoutes: AdminRoute[] = [
  { method: "GET", path: "/whoami", scope: "read", handle: whoami, openapi: { operationId: "admin_whoami", responseSchema: "AdminWhoami", summary: "The admin key making the request: its id, scope and expiry" } },
  {
    method: "GET", path: "/traffic", scope: "read", handle: traffic,
    openapi: {
      operationId: "admin_traffic",
      responseSchema: "AdminTraffic",
      summary: "Live traffic over the last hour, every 10 s (this process's, or every worker's under start --workers): requests by status class, latency and time-to-first-byte percentiles, tokens; time-to-first-token percentiles per 5 minutes",
      query: [{ name: "after", description: "Only steps ending after this time (ms since the epoch): what a poller has not seen yet." }],
    },
  },
  { method: "GET", path: "/config/loaded", scope: "read", handle: configLoaded, openapi: { operationId: "admin_config_loaded", responseSchema: "AdminConfigLoaded", summary: "What the config in force has loaded (pipeline, providers, models, projects, admin keys) and the last reload: when, why, what it changed or why it was refused" } },
];
