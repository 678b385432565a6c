// Providers and models as the gateway sees them now: enabled or why not, each endpoint's circuit state and live
// statistics (latency, throughput, uptime: the same figures the catalog's endpoints listing shows), and the config
// (which file, its last reload: when, what started it, refused and why or what it changed), the store and the key cache.
import { healthOf, type CircuitState } from "../health/index.ts";
import { statsOf } from "../stats/index.ts";
import { iso } from "./query.ts";
import { reloadView } from "./reload-view.ts";
import type { AdminAnswer, AdminRequest } from "./route.ts";
import { retirementMark } from "../config/retirement.ts";

export async function models(r: AdminRequest): Promise<AdminAnswer> {
  const gw = r.gateway;
  const health = healthOf(gw);
  const stats = statsOf(gw);
  const out = [];
  const now = Date.now();
  for (const m of gw.config.models.values()) {
    const endpoints = [];
    for (const e of m.endpoints) {
      const s = await stats.read(m.id, e.provider);
      // A retiring or retired endpoint stays listed for the operator, marked: the router sends a retired one nothing.
      const mark = retirementMark(m, e.provider, e.upstreamModel, now);
      endpoints.push({ provider: e.provider, upstream_model: e.upstreamModel, circuit: health.stateOf(m.id, e.provider), ...s, ...mark });
    }
    out.push({ id: m.id, type: m.type, endpoints });
  }
  return { body: { models: out } };
}

export async function providers(r: AdminRequest): Promise<AdminAnswer> {
  const gw = r.gateway;
  const health = healthOf(gw);
  const out = [];
  const names = new Set([...gw.config.providers.keys(), ...gw.config.disabledProviders.keys()]);
  for (const name of [...names].sort()) {
    const pc = gw.config.providers.get(name) ?? gw.config.raw.providers?.[name];
    const circuits: Record<CircuitState, number> = { closed: 0, half_open: 0, open: 0 };
    let endpoints = 0;
    for (const m of gw.config.models.values()) {
      for (const e of m.endpoints) {
        if (e.provider !== name) continue;
        endpoints++;
        circuits[health.stateOf(m.id, name)]++;
      }
    }
    const disabled = gw.config.disabledProviders.get(name);
    out.push({ name, protocol: pc?.protocol ?? null, enabled: !disabled, ...(disabled ? { disabled_reason: disabled } : {}), endpoints, circuits });
  }
  return { body: { providers: out } };
}

export async function configState(r: AdminRequest): Promise<AdminAnswer> {
  const gw = r.gateway;
  const problems = gw.reloadProblems;
  const store = await gw.store.status();
  return {
    body: {
      config: {
        file: gw.config.file, status: problems ? "reload_refused" : "ok", ...(problems ? { problems } : {}),
        restart_pending: [...gw.restartPending], last_reload: reloadView(gw.lastReload),
      },
      store,
      key_cache: { keys: gw.apiKeys.all().length, synced_at: iso(gw.apiKeys.syncedAt || null), refresh_ms: gw.config.store.key_refresh_ms ?? 2000 },
      counts: { projects: gw.config.projects.size, models: gw.config.models.size, providers: gw.config.providers.size, admin_keys: gw.config.adminKeys.size },
    },
  };
}
