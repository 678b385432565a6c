// fallback: lets dispatch walk every target the router planned (the request's providers, then each fallback
// model's), retrying only retryable failures, with backoff that honours the upstream's Retry-After.
import { definePlugin } from "../../core/pipeline/define.ts";
import { attemptsFor, policyOf, retryDelayMs } from "./policy.ts";

export default definePlugin({
  name: "fallback",
  dependsOn: ["router"],
  handle(ctx, next) {
    if (!ctx.targets.length) return next(); // catalog and other non-inference requests
    const policy = policyOf(ctx.config.raw.routing);
    ctx.maxAttempts = attemptsFor(ctx.targets.length, policy);
    ctx.retryDelay = (err, attempt, info) => retryDelayMs(policy, attempt, info.sameEndpoint, err.retryAfter);
    return next();
  },
});
