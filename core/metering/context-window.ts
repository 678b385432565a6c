// The context window one request has on one endpoint. Claude Sonnet 4 / 4.5 take 1M tokens only when the request
// asks for it (anthropic-beta: context-1m-2025-08-07) and that reaches the upstream: a Messages client's own header,
// which the gateway forwards to an Anthropic-protocol upstream alone (Anthropic's API and Claude on Vertex as the
// header, Bedrock's InvokeModel as `anthropic_beta` in the body); a translated call carries no client header. Without
// it the upstream refuses a prompt over the endpoint's context_window, so the budget's hold and the usage ceiling
// stay within that; with it they reach the tier's `long_context.context_window`.
import type { GatewayContext } from "../pipeline/context.ts";
import type { Target } from "../contracts/provider.ts";
import { upstreamProtocolOf } from "../contracts/translator.ts";

/** What decides an endpoint's window for a request: the catalog endpoint or the routed target. */
export type WindowEndpoint = Pick<Target, "provider" | "upstreamModel" | "pricing" | "contextWindow" | "nativeResponses">;

/** Anthropic's long-context betas (context-1m-2025-08-07 today). */
const LONG_CONTEXT_BETA = /^context-1m-/;

/** Whether the client's anthropic-beta header names a long-context beta. */
function betaAsked(ctx: GatewayContext): boolean {
  const raw = ctx.headers?.["anthropic-beta"];
  if (raw === undefined) return false;
  const all = (Array.isArray(raw) ? raw.join(",") : raw).split(",");
  return all.some((b) => LONG_CONTEXT_BETA.test(b.trim()));
}

/**
 * Whether this request asks for the long context and it reaches this endpoint's upstream: a Messages client's beta,
 * sent natively (the upstream speaks Messages). A provider with no driver here (a project's own key): assumed to,
 * so a hold errs high.
 */
export function opensLongContext(ctx: GatewayContext, ep: WindowEndpoint): boolean {
  if (ctx.endpoint !== "messages" || !betaAsked(ctx)) return false;
  const driver = ctx.drivers?.get(ep.provider);
  return !driver || upstreamProtocolOf(driver, "messages", ep as Target) === "messages";
}

/** The context window this request has on this endpoint: the tier's long one when it opens it, else the endpoint's. */
export function contextWindowOn(ctx: GatewayContext, ep: WindowEndpoint): number | undefined {
  const long = ep.pricing?.long_context?.context_window;
  return long !== undefined && opensLongContext(ctx, ep) ? long : ep.contextWindow;
}
