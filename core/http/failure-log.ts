// The log line of a request that failed with the gateway's own 500 (INTERNAL): the client gets only the envelope's
// "Internal gateway error", so the line is where the cause is found — its message and stack, and the third-party
// plugin it came from, so an operator running several plugins can tell which one threw and where.
import type { GatewayContext } from "../pipeline/context.ts";
import type { GatewayError } from "../errors.ts";
import { pluginThatAnswered, pluginThatThrew, streamWrappers } from "../pipeline/compose.ts";
import { PluginFault } from "../pipeline/answer-status.ts";

/** The gateway's own failure (a 500 INTERNAL: a bug, a plugin's throw), whose cause only the log tells. */
export const isInternalFault = (err: GatewayError): boolean => err.status >= 500 && err.code === "INTERNAL";

/**
 * Logs `err` (an INTERNAL 500) as "request failed". `whileWriting`: it came out of writing the answer (reading its
 * stream), and the plugins that wrapped the stream, or made the answer, are named, as the plugin whose handle threw is
 * for a failure before.
 */
export function logRequestFailure(ctx: GatewayContext, err: GatewayError, whileWriting = false): void {
  const cause = err.cause ?? err;
  ctx.gateway?.log.error("request failed", {
    requestId: ctx.requestId,
    error: String(cause),
    ...blamed(ctx, cause, whileWriting),
    ...(cause instanceof Error && cause.stack ? { stack: cause.stack } : {}),
    ...(whileWriting ? { during: "writing the answer" } : {}),
  });
}

function blamed(ctx: GatewayContext, cause: unknown, whileWriting: boolean): { plugin?: string; plugins?: string[]; blame?: string } {
  const plugin = cause instanceof PluginFault ? cause.plugin : pluginThatThrew(ctx, cause);
  if (plugin !== undefined) return { plugin };
  if (!whileWriting) return {};
  // Which wrapper's code threw (or whether the stream it wrapped did) is not tracked per event: that would take every
  // stream through a third-party plugin off the push path (core/sse/push.ts). So the log says what is known.
  const wrappers = streamWrappers(ctx);
  if (wrappers.length === 1) return { plugin: wrappers[0], blame: "its stream wrapper, or the stream it wrapped" };
  if (wrappers.length) return { plugins: wrappers, blame: "one of these plugins' stream wrappers, or the stream they wrapped" };
  const answered = pluginThatAnswered(ctx);
  return answered === undefined ? {} : { plugin: answered };
}
