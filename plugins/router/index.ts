// router: public model id -> ordered targets. Sandbox keys always go to the built-in simulator.
import { definePlugin } from "../../core/pipeline/define.ts";
import { GatewayError } from "../../core/errors.ts";
import type { Target } from "../../providers/types.ts";
import type { ModelRuntime } from "../../core/config/runtime.ts";

export function sandboxTarget(model: ModelRuntime): Target {
  return {
    modelId: model.id,
    provider: "sim",
    upstreamModel: model.id,
    pricing: {},
    contextWindow: model.config.context_window,
    maxTokens: model.config.max_tokens,
    sandbox: true,
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
  }));
}

export default definePlugin({
  name: "router",
  handle(ctx, next) {
    if (ctx.body === undefined || typeof ctx.body.model !== "string") return next();
    const model = ctx.config.models.get(ctx.body.model);
    if (!model) {
      throw new GatewayError(404, "MODEL_NOT_FOUND", `Model "${ctx.body.model}" does not exist (GET /api/v1/models lists the catalog)`, {
        details: { field: "model" },
      });
    }
    ctx.model = model;
    if (ctx.auth?.sandbox) {
      ctx.targets = [sandboxTarget(model)];
      return next();
    }
    ctx.targets = endpointTargets(model);
    if (!ctx.targets.length) {
      const why = model.config.endpoints.map((ep) => ctx.config.disabledProviders.get(ep.provider)).filter(Boolean);
      throw new GatewayError(502, "UPSTREAM_ERROR", `No provider is available for ${model.id}${why.length ? `: ${why.join("; ")}` : ""}`, {
        details: { model: model.id },
      });
    }
    return next();
  },
});
