// router: public model id (+ providerOptions.gateway: only/order/sort/models/providerTimeouts.byok) -> ordered
// targets for dispatch. Sandbox keys always go to the built-in simulator. Non-inference requests pass through.
import { definePlugin } from "../../core/pipeline/define.ts";
import { GatewayError } from "../../core/errors.ts";
import type { Target } from "../../core/contracts/provider.ts";
import type { ModelRuntime } from "../../core/config/runtime.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import { statsOf } from "../../core/stats/index.ts";
import { canThink } from "../../core/metering/thinking.ts";
import { fullyRetired, retiredEndpoint, retiredModelError } from "../../core/config/retirement.ts";
import { planRoute, requestShape, type RequestShape, type RouteInput, type RoutingOptions } from "./route.ts";
import { noTargetError } from "./no-target.ts";
import { aModelOfType } from "../../core/endpoints/model-type-words.ts";

const UNSIZED: RequestShape = { inputTokens: 0, outputTokens: 0 };

export function sandboxTarget(model: ModelRuntime): Target {
  return {
    modelId: model.id,
    provider: "sim",
    upstreamModel: model.id,
    pricing: {},
    contextWindow: model.config.context_window,
    maxTokens: model.config.max_tokens,
    sandbox: true,
    ...(canThink(model) ? { reasoning: true } : {}),
  };
}


export function endpointTargets(model: ModelRuntime): Target[] {
  return model.endpoints.map((ep) => ({
    modelId: model.id,
    provider: ep.provider,
    upstreamModel: ep.upstreamModel,
    pricing: ep.pricing,
    contextWindow: ep.contextWindow,
    maxTokens: ep.maxTokens,
    ...(ep.reasoningModel !== undefined ? { reasoningModel: ep.reasoningModel } : {}),
    ...(ep.nativeResponses ? { nativeResponses: true } : {}),
    ...(ep.acceptsReasoningEffort === false ? { acceptsReasoningEffort: false } : {}),
    ...(canThink(model) ? { reasoning: true } : {}),
  }));
}

function notFound(id: string, field: string): GatewayError {
  return new GatewayError(404, "MODEL_NOT_FOUND", `Model "${id}" does not exist (GET /api/v1/models lists the catalog)`, { details: { field } });
}

/** A model whose every endpoint has retired by `now` is gone: the 404 names the day and the replacement. */
function refuseRetired(m: ModelRuntime, field: string, now: number): void {
  if (!m.retiresAt || !fullyRetired(m, now)) return;
  throw retiredModelError(m, retiredEndpoint(m, now)!, field, now);
}

/**
 * The request's model, then each fallback model (unknown ones are a 404 naming the field; repeats are dropped). A
 * fallback whose every endpoint has retired is left out, as a fallback's retired endpoint is: it could never serve,
 * and refusing the request for it would fail a primary that can.
 */
function resolveChain(ctx: GatewayContext, primary: ModelRuntime, options: RoutingOptions, now: number): ModelRuntime[] {
  const chain = [primary];
  (options.models ?? []).forEach((id, i) => {
    const m = ctx.config.models.get(id);
    if (!m) throw notFound(id, `providerOptions.gateway.models[${i}]`);
    if (fullyRetired(m, now)) return;
    if (m.type !== primary.type) {
      throw new GatewayError(400, "INVALID_REQUEST", `Fallback model "${id}" is ${aModelOfType(m.type)}; ${primary.id} is ${aModelOfType(primary.type)}`, {
        details: { field: `providerOptions.gateway.models[${i}]` },
      });
    }
    if (!chain.includes(m)) chain.push(m);
  });
  return chain;
}

export default definePlugin({
  name: "router",
  handle(ctx, next) {
    if (ctx.body === undefined || ctx.body === null || typeof ctx.body.model !== "string") return next();
    const model = ctx.config.models.get(ctx.body.model);
    if (!model) throw notFound(ctx.body.model, "model");
    ctx.model = model;
    const now = Date.now();
    refuseRetired(model, "model", now);
    const options: RoutingOptions = ctx.body.providerOptions?.gateway ?? {};
    const chain = resolveChain(ctx, model, options, now);
    if (ctx.auth?.sandbox) {
      ctx.targets = chain.map(sandboxTarget);
      return next();
    }
    const stats = statsOf(ctx.gateway);
    const route: RouteInput = {
      chain,
      now,
      options,
      enabled: new Set(ctx.config.providers.keys()),
      declared: ctx.config.raw.providers ?? {},
      byok: ctx.auth?.project.config.providers,
      // Only a cost sort reads the shape: sizing the body (a JSON.stringify of the messages) costs time that grows
      // with the conversation, on every request otherwise.
      shape: options.sort === "cost" ? requestShape(ctx.endpoint, ctx.body) : UNSIZED,
      stats: (m, p) => stats.view(m, p),
    };
    ctx.targets = planRoute(route);
    if (!ctx.targets.length) throw noTargetError(route, model, ctx.config.disabledProviders);
    return next();
  },
});
