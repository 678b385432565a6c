// The most a request can cost: the largest input it can carry and the most output it may produce, at the dearest
// endpoint of the requested model and of every fallback model.
import Big from "big.js";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import type { Pricing } from "../../core/generated/types/gateway.ts";
import type { Usage } from "../../providers/types.ts";
import { costOf } from "../../core/money/money.ts";
import { requestedModels } from "../allowlist/index.ts";
import { bodyChars, requestedOutput } from "./estimate.ts";

const FALLBACK_CONTEXT = 1_000_000;

function worstUsage(ctx: GatewayContext, contextWindow: number | undefined, maxTokens: number | undefined): Usage {
  const body = ctx.body ?? {};
  const input = Math.min(bodyChars(ctx), contextWindow ?? FALLBACK_CONTEXT);
  switch (ctx.endpoint) {
    case "embeddings":
      return { inputTokens: input, outputTokens: 0 };
    case "rerank":
      return { inputTokens: input, outputTokens: 0, searchUnits: 1 };
    case "images":
      return { inputTokens: input, outputTokens: 0, images: typeof body.n === "number" ? body.n : 1 };
    case "videos":
      return { inputTokens: input, outputTokens: 0, videoSeconds: typeof body.duration === "number" ? Math.ceil(body.duration) : 60 };
    default: {
      const n = typeof body.n === "number" && body.n > 1 ? body.n : 1;
      const output = requestedOutput(body) ?? (maxTokens ?? contextWindow ?? FALLBACK_CONTEXT) * n;
      return { inputTokens: input, outputTokens: output };
    }
  }
}

/** Input priced at the dearer of the input and cache-write prices: the cache split is unknown beforehand. */
function dearestInput(p: Pricing): Pricing {
  if (!p.input_cache_write || !p.input || new Big(p.input_cache_write).lte(p.input)) return p;
  return { ...p, input: p.input_cache_write };
}

export function worstCaseCost(ctx: GatewayContext): Big {
  let worst = new Big(0);
  for (const { id } of requestedModels(ctx.body)) {
    const model = ctx.config.models.get(id);
    if (!model) continue;
    for (const ep of model.endpoints) {
      const c = costOf(worstUsage(ctx, ep.contextWindow, ep.maxTokens), dearestInput(ep.pricing));
      if (c.gt(worst)) worst = c;
    }
  }
  return worst;
}
