// Whose stored responses a request sees: its project's, of its kind of key. A project's sandbox keys (mg_test_…, the
// simulator's answers) have a key space of their own, as for idempotency and the response cache: they never read,
// continue or delete a live key's conversation, and a live request never continues the simulator's.
import type { GatewayContext } from "../pipeline/context.ts";
import type { ResponseOwner } from "../store/responses-types.ts";

export function responseOwner(ctx: GatewayContext): ResponseOwner {
  return { project: ctx.auth?.projectId ?? "", sandbox: ctx.auth?.sandbox === true };
}
