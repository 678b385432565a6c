// Drivers for providers the gateway itself has no key for, used only by attempts that carry a project's own
// credentials (bring-your-own-key). The gateway keeps them as it keeps its own (core/gateway.ts): built with the
// request's config snapshot (its provider block and upstream server settings, so a reload reaches them too), and
// closed once no snapshot that used them is held.
import type { GatewayContext } from "./pipeline/context.ts";
import type { ProviderDriver } from "./contracts/provider.ts";

export function byokDriver(ctx: GatewayContext, provider: string): ProviderDriver | undefined {
  return ctx.gateway.byokDriver(ctx.drivers, provider);
}
