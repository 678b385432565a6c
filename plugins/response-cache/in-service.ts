// Whether a request's models are ones the router still serves: each in the catalog and none retired whole (every
// endpoint past its `retires:` day, core/config/retirement.ts). When one is not, the cache stands aside and the router
// answers as it does without the cache: for the request's own model the 404 naming the day and the replacement; for a
// fallback model (providerOptions.gateway.models) the chain without it, where a kept answer may be that model's.
import type { GatewayContext } from "../../core/pipeline/context.ts";
import { fullyRetired } from "../../core/config/retirement.ts";

export function modelsInService(ctx: GatewayContext, now: number): boolean {
  const models = ctx.config.models;
  const serves = (id: unknown) => {
    const m = typeof id === "string" ? models.get(id) : undefined;
    return m !== undefined && !fullyRetired(m, now);
  };
  if (!serves(ctx.body?.model)) return false;
  const fallbacks: unknown = ctx.body.providerOptions?.gateway?.models;
  return !Array.isArray(fallbacks) || fallbacks.every(serves);
}
