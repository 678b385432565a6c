// Who served a request, as /metrics (the provider label) and the access line name it: the provider that answered,
// "cache" for a response-cache hit (plugins/response-cache sets that as the resolved provider), "replay" for an
// idempotent replay (plugins/idempotency) — neither is a provider's load, latency or errors. The replay's headers
// still name the provider that made the answer (x-mg-provider), as the original's did.
import type { GatewayContext } from "../pipeline/context.ts";

declare module "../pipeline/context.ts" {
  interface GatewayContext {
    /** Answered by replaying a kept answer (plugins/idempotency): no provider reached, nothing billed. */
    replayed?: boolean;
  }
}

export const REPLAY_PROVIDER = "replay";

export function servedBy(ctx: GatewayContext): string | undefined {
  return ctx.resolvedProvider ?? (ctx.replayed ? REPLAY_PROVIDER : undefined);
}
