// Why a request was left with no target, as the client's answer. While something here still serves the chain, it is
// the client's `only` that removed it all: a 400 naming the field and what does serve (live endpoints this caller can
// reach), never the retired-model 404. Only when nothing here can serve the chain is it the 404 naming the retirement
// (a live endpoint left is then one this gateway has no key for) or a config fault.
import { configFault, GatewayError } from "../../core/errors.ts";
import type { ModelRuntime } from "../../core/config/runtime.ts";
import { liveEndpoints, retiredEndpoint, retiredModelError } from "../../core/config/retirement.ts";
import { planRoute, type RouteInput } from "./route.ts";

/** Per provider named in `only` that serves none of the chain here: its endpoint retired on a day, or it has no key. */
function whyNotServed(chain: readonly ModelRuntime[], only: readonly string[], offered: readonly string[], now: number): string[] {
  const notes: string[] = [];
  for (const p of new Set(only)) {
    if (offered.includes(p)) continue;
    const live = chain.some((m) => liveEndpoints(m, now).some((ep) => ep.provider === p));
    if (live) { notes.push(`${p} is not configured on this gateway`); continue; }
    const retired = chain.flatMap((m) => m.config.endpoints.filter((ep) => ep.provider === p && ep.retires !== undefined && !liveEndpoints(m, now).includes(ep)));
    const days = [...new Set(retired.map((ep) => ep.retires!))];
    if (days.length) notes.push(`${p}'s endpoint retired on ${days.join(", ")}`);
  }
  return notes;
}

export function noTargetError(route: RouteInput, primary: ModelRuntime, disabledProviders: ReadonlyMap<string, string>): GatewayError {
  const { chain, now, options } = route;
  if (options.only) {
    // What would serve without the client's filters (`order` and `sort` only arrange, `only` removes).
    const offered = [...new Set(planRoute({ ...route, options: {} }).map((t) => t.provider))];
    if (offered.length) {
      const notes = whyNotServed(chain, options.only, offered, now);
      return new GatewayError(400, "INVALID_REQUEST",
        `No provider in providerOptions.gateway.only (${options.only.join(", ")}) can serve ${chain.map((m) => m.id).join(", ")}` +
        `${notes.length ? ` (${notes.join("; ")})` : ""}; it is offered by: ${offered.join(", ")}`,
        { details: { field: "providerOptions.gateway.only", offered } });
    }
  }
  // Nothing here serves the chain: the endpoint that would have has retired, and what is left has no key here.
  const retired = chain.find((m) => m.retiresAt && retiredEndpoint(m, now));
  if (retired) return retiredModelError(retired, retiredEndpoint(retired, now)!, retired === primary ? "model" : "providerOptions.gateway.models", now);
  const why = chain.flatMap((m) => m.config.endpoints.map((ep) => disabledProviders.get(ep.provider))).filter(Boolean);
  // Every provider of the model is disabled in the config ($VAR not set): no retry helps until an operator acts.
  return configFault(`No provider is available for ${primary.id}${why.length ? `: ${[...new Set(why)].join("; ")}` : ""}`, { model: primary.id });
}
