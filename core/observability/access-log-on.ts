// Whether request lines are written. `log` is read only at start (core/config/restart-only.ts), so this follows the
// config the process started with: a reload that changes log.access is reported as waiting for a restart and does
// not turn the lines off (or on) meanwhile.
import type { GatewayHandle } from "../contracts/gateway.ts";

/** `log.access` (default on) as the gateway started with it, at a level that shows info. */
export function accessLogOn(gateway: GatewayHandle): boolean {
  return gateway.startConfig.raw.log?.access !== false && gateway.log.enabled("info");
}
