// Catalog endpoints a provider retires on a given day (`retires: YYYY-MM-DD`): from 00:00 UTC that day the router
// sends them nothing, the catalog stops listing them, and a model with none left is a 404 naming the day. The day is
// parsed once, at config load, into an instant; a request only compares Date.now() with it, and only for a model that
// has such an endpoint at all.
import type { GatewayConfig, ModelConfig, ModelEndpointConfig } from "../generated/types/gateway.ts";
import type { EndpointRuntime, ModelRuntime } from "./runtime.ts";
import { GatewayError } from "../errors.ts";

const DAY_MS = 86_400_000;
const retiredAt = (at: number | undefined, now: number) => at !== undefined && at <= now;
/** How long before the day `check` and the start log name a retiring endpoint. */
export const RETIREMENT_NOTICE_DAYS = 30;

/** 00:00 UTC of a YYYY-MM-DD day; NaN for a day the calendar has not (2026-02-30). */
export function retirementInstant(day: string): number {
  const at = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(at) || new Date(at).toISOString().slice(0, 10) !== day ? Number.NaN : at;
}

/** Each config endpoint's retirement instant, aligned with `endpoints`; undefined when none of them retires. */
export function retirementInstants(endpoints: readonly ModelEndpointConfig[]): (number | undefined)[] | undefined {
  if (!endpoints.some((ep) => ep.retires !== undefined)) return undefined;
  return endpoints.map((ep) => (ep.retires === undefined ? undefined : retirementInstant(ep.retires)));
}

/** The model's catalog endpoints not retired at `now` (the same array when none ever retires). */
export function liveEndpoints(model: ModelRuntime, now: number): readonly ModelEndpointConfig[] {
  const at = model.retiresAt;
  if (!at) return model.config.endpoints;
  return model.config.endpoints.filter((_, i) => !retiredAt(at[i], now));
}

/**
 * The model's configured endpoints (enabled providers) not retired at `now`: what a request can be sent to, so what
 * its budget hold, token estimate and limits are judged on (a retired endpoint's prices or limits never apply).
 */
export function liveConfiguredEndpoints(model: ModelRuntime, now: number): readonly EndpointRuntime[] {
  if (!model.retiresAt) return model.endpoints;
  return model.endpoints.filter((e) => !endpointRetired(model, e.provider, e.upstreamModel, now));
}

/** Whether the provider's endpoint `provider`/`upstreamModel` of this model has retired at `now`. */
export function endpointRetired(model: ModelRuntime, provider: string, upstreamModel: string, now: number): boolean {
  const at = model.retiresAt;
  if (!at) return false;
  return model.config.endpoints.some((ep, i) => retiredAt(at[i], now) && ep.provider === provider && ep.model === upstreamModel);
}

/**
 * How an admin view marks a configured endpoint with a `retires:` day: the day, and whether it has come (the router
 * sends it nothing from then on); undefined for an endpoint with none.
 */
export function retirementMark(model: ModelRuntime, provider: string, upstreamModel: string, now: number): { retires: string; retired: boolean } | undefined {
  if (!model.retiresAt) return undefined;
  const i = model.config.endpoints.findIndex((ep) => ep.retires !== undefined && ep.provider === provider && ep.model === upstreamModel);
  return i === -1 ? undefined : { retires: model.config.endpoints[i]!.retires!, retired: retiredAt(model.retiresAt[i], now) };
}

/** The latest retired endpoint of the model at `now` (the one its error names), if any. */
export function retiredEndpoint(model: ModelRuntime, now: number): ModelEndpointConfig | undefined {
  const at = model.retiresAt;
  if (!at) return undefined;
  let found: ModelEndpointConfig | undefined;
  let latest = -Infinity;
  model.config.endpoints.forEach((ep, i) => {
    if (retiredAt(at[i], now) && at[i]! > latest) { latest = at[i]!; found = ep; }
  });
  return found;
}

/** Every endpoint of the model has retired at `now`: it is gone from the catalog. */
export const fullyRetired = (model: ModelRuntime, now: number): boolean =>
  !!model.retiresAt && liveEndpoints(model, now).length === 0;

/**
 * The client's answer for a model nothing can serve any more because its endpoint retired: 404 MODEL_NOT_FOUND (as
 * the provider itself answers a retired id), naming the day and the replacement, final for the client.
 */
export function retiredModelError(model: ModelRuntime, ep: ModelEndpointConfig, field: string, now: number): GatewayError {
  const left = liveEndpoints(model, now).map((e) => e.provider);
  const others = left.length ? ` (its other endpoints, ${left.join(", ")}, are not configured on this gateway)` : "";
  const instead = ep.replacement ? `; use ${ep.replacement} instead` : "";
  return new GatewayError(404, "MODEL_NOT_FOUND",
    `Model "${model.id}" was retired on ${ep.retires} by ${ep.provider} (${ep.model})${others}${instead}`,
    { details: { field, model: model.id, retired: ep.retires, ...(ep.replacement ? { replacement: ep.replacement } : {}) }, retryable: false });
}

/** The upstream an endpoint reaches: its provider's protocol and host, and the upstream id (not the provider's name). */
function upstreamOf(config: GatewayConfig, ep: ModelEndpointConfig): string {
  const pc = config.providers?.[ep.provider];
  if (!pc) return `${ep.provider}\u0000${ep.model}`;
  let host = "";
  try { host = pc.base_url ? new URL(pc.base_url).host : ""; } catch { /* refused by the URL check */ }
  return `${pc.protocol}\u0000${host}\u0000${ep.model}`;
}

/**
 * Notices for `check` and the start log: each endpoint of an enabled provider retiring within the notice window, and
 * each operator endpoint (no `retires` of its own) naming an upstream id the catalog retires, which the gateway
 * keeps routing, before or after the day. `replaced` holds the included (catalog) entries the operator's own
 * `models:` replaced under the same id: copying a catalog entry to change it drops its `retires`, and the operator
 * is told all the same.
 */
export function retirementNotices(config: GatewayConfig, enabled: (provider: string) => boolean, now: number,
  replaced: Readonly<Record<string, ModelConfig>> = {}): string[] {
  const out: string[] = [];
  const retiring = new Map<string, { day: string; at: number; model: string; replaced: boolean; replacement?: string }>();
  const mark = (id: string, ep: ModelEndpointConfig, wasReplaced: boolean) => {
    const at = retirementInstant(ep.retires!);
    retiring.set(upstreamOf(config, ep), { day: ep.retires!, at, model: id, replaced: wasReplaced, ...(ep.replacement ? { replacement: ep.replacement } : {}) });
    return at;
  };
  for (const [id, m] of Object.entries(replaced)) {
    // Not validated (the operator's entry replaced it): only a well-formed day counts.
    for (const ep of m.endpoints) if (typeof ep?.retires === "string" && !Number.isNaN(retirementInstant(ep.retires))) mark(id, ep, true);
  }
  for (const [id, m] of Object.entries(config.models ?? {})) {
    for (const ep of m.endpoints) {
      if (ep.retires === undefined) continue;
      const at = mark(id, ep, false);
      if (!enabled(ep.provider) || at <= now || at - now > RETIREMENT_NOTICE_DAYS * DAY_MS) continue;
      const days = Math.ceil((at - now) / DAY_MS);
      const left = m.endpoints.filter((e) => e !== ep && (e.retires === undefined || retirementInstant(e.retires) > at) && enabled(e.provider)).map((e) => e.provider);
      out.push(`model ${id}: endpoint ${ep.provider}/${ep.model} retires on ${ep.retires} (in ${days} day${days === 1 ? "" : "s"}); from then the gateway sends it no requests` +
        (left.length ? ` and serves ${id} from ${left.join(", ")}` : `, and ${id} has no other configured endpoint`) +
        (ep.replacement ? `; suggested replacement: ${ep.replacement}` : ""));
    }
  }
  if (!retiring.size) return out;
  for (const [id, m] of Object.entries(config.models ?? {})) {
    for (const ep of m.endpoints) {
      const r = ep.retires === undefined ? retiring.get(upstreamOf(config, ep)) : undefined;
      if (!r || !enabled(ep.provider) || r.at - now > RETIREMENT_NOTICE_DAYS * DAY_MS) continue;
      const marked = r.replaced && r.model === id ? "the catalog's entry this one replaces marks" : `${r.model} marks`;
      out.push(`model ${id}: endpoint ${ep.provider}/${ep.model} is the upstream id ${marked} as retiring on ${r.day}; ` +
        `this entry has no retires: of its own, so the gateway keeps sending it requests${r.at <= now ? ", which the provider no longer serves" : ""}` +
        (r.replacement ? `; suggested replacement: ${r.replacement}` : ""));
    }
  }
  return out;
}
