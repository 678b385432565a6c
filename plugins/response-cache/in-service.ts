// Whether the cache may answer for models the router still serves (core/config/retirement.ts: a model whose every
// endpoint is past its `retires:` day is retired whole). The cache stands aside, and the router answers as it does
// without the cache, where the request names a model the router refuses: its own model removed or retired whole
// (the 404 naming the day and the replacement), a fallback not in the catalog (the 404). A fallback retired whole is
// not refused (the router leaves it out of the chain), so such a request is still cached: only an answer that the
// retired model itself gave is not replayed (keptBy).
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { ModelRuntime } from "../../core/config/runtime.ts";
import { fullyRetired } from "../../core/config/retirement.ts";

const modelOf = (ctx: GatewayContext, id: unknown): ModelRuntime | undefined => (typeof id === "string" ? ctx.config.models.get(id) : undefined);

const fallbacksOf = (ctx: GatewayContext): unknown[] => {
  const models: unknown = ctx.body.providerOptions?.gateway?.models;
  return Array.isArray(models) ? models : [];
};

/** The router would route the request: its model in service, each fallback in the catalog. */
export function routable(ctx: GatewayContext, now: number): boolean {
  const own = modelOf(ctx, ctx.body?.model);
  return own !== undefined && !fullyRetired(own, now) && fallbacksOf(ctx).every((id) => modelOf(ctx, id) !== undefined);
}

/**
 * Whether a kept answer may be replayed now, by the model that gave it (`servedBy`, the gateway's id): only while that
 * model is in service. An entry kept before the cache noted it could be any of the request's models': it is replayed
 * only while every one of them is.
 */
export function keptByModelInService(ctx: GatewayContext, servedBy: string | undefined, now: number): boolean {
  const inService = (id: unknown) => {
    const m = modelOf(ctx, id);
    return m !== undefined && !fullyRetired(m, now);
  };
  return servedBy !== undefined ? inService(servedBy) : fallbacksOf(ctx).every(inService);
}
