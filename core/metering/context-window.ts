// The context window one request has on one endpoint. Claude Sonnet 4 / 4.5 take 1M tokens only when the upstream
// call asks for it (Anthropic's context-1m-* beta); without it the upstream refuses a prompt over the endpoint's
// context_window, so the budget's hold and the usage ceiling stay within that, and with it they reach the tier's
// `long_context.context_window`. Where the ask travels is the driver's business (a Messages client's header or body
// field, the provider's configured headers, which a translated call from any client protocol carries too): the
// driver that builds the call says whether it carries the ask (ProviderDriver.opensLongContext), core never guesses.
import type { GatewayContext } from "../pipeline/context.ts";
import type { Target } from "../contracts/provider.ts";
import { upstreamProtocolOf, type ClientProtocol } from "../contracts/translator.ts";

/** What decides an endpoint's window for a request: the catalog endpoint or the routed target. */
export type WindowEndpoint = Pick<Target, "provider" | "upstreamModel" | "pricing" | "contextWindow" | "nativeResponses">;

const CLIENTS = new Set<string>(["chat", "messages", "responses", "gemini"]);
const NO_HEADERS = {};

/**
 * Whether the call this request makes to this endpoint opens the long context. The client's own body and headers
 * reach the driver only where the call is native (a Messages client to a Messages upstream); a translated body
 * carries neither. A provider with no driver here (disabled, or served by a project's own key once routed): assumed
 * to when a Messages client's header or body names the beta, so a hold errs high.
 */
export function opensLongContext(ctx: GatewayContext, ep: WindowEndpoint): boolean {
  if (!CLIENTS.has(ctx.endpoint)) return false;
  const client = ctx.endpoint as ClientProtocol;
  const driver = ctx.drivers?.get(ep.provider);
  if (!driver) return client === "messages" && mentionsLongContext(ctx);
  if (!driver.opensLongContext) return false;
  const native = upstreamProtocolOf(driver, client, ep as Target) === client;
  return driver.opensLongContext(ep as Target, native ? { body: ctx.body, clientHeaders: ctx.headers ?? NO_HEADERS } : { clientHeaders: NO_HEADERS });
}

/** The client's anthropic-beta header or body anthropic_beta names a context-1m-* beta (for a driver unknown here). */
function mentionsLongContext(ctx: GatewayContext): boolean {
  const header = ctx.headers?.["anthropic-beta"];
  const betas = [header, ctx.body?.anthropic_beta].flat().filter((b) => typeof b === "string").join(",");
  return /(^|,)\s*context-1m-/.test(betas);
}

/** The context window this request has on this endpoint: the tier's long one when it opens it, else the endpoint's. */
export function contextWindowOn(ctx: GatewayContext, ep: WindowEndpoint): number | undefined {
  const long = ep.pricing?.long_context?.context_window;
  return long !== undefined && opensLongContext(ctx, ep) ? long : ep.contextWindow;
}
