// Drivers for providers the gateway itself has no key for, used only by attempts that carry a project's own
// credentials (bring-your-own-key). Created on first use, kept per gateway, closed with it.
import type { GatewayContext } from "./pipeline/context.ts";
import type { GatewayHandle } from "./contracts/gateway.ts";
import type { ProviderDriver } from "./contracts/provider.ts";

const cache = new WeakMap<GatewayHandle, Map<string, ProviderDriver>>();

export function byokDriver(ctx: GatewayContext, provider: string): ProviderDriver | undefined {
  const pc = ctx.config.raw.providers?.[provider];
  if (!pc) return undefined;
  let drivers = cache.get(ctx.gateway);
  if (!drivers) {
    const map = new Map<string, ProviderDriver>();
    drivers = map;
    cache.set(ctx.gateway, map);
    ctx.gateway.onClose(async () => {
      await Promise.all([...map.values()].map((d) => d.close?.().catch(() => {})));
      map.clear();
    });
  }
  const key = `${provider}\n${JSON.stringify(pc)}`;
  let d = drivers.get(key);
  if (!d) {
    d = ctx.gateway.createDriver(provider, pc);
    drivers.set(key, d);
  }
  return d;
}
