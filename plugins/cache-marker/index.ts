// cache-marker: prompt-cache breakpoints. Explicit `cache_control` markers pass to native (Anthropic) upstreams;
// with providerOptions.gateway.caching: "auto" the gateway places them itself (see core/prompt-cache/markers.ts). Translation to a
// chat upstream drops them, and chat bodies carrying them are stripped before a non-Anthropic upstream
// (stream-transcoder). Chat, Responses and Gemini requests get their auto markers, and the 4-breakpoint check, on the
// Messages body they are translated to (chat-to-messages), the one Anthropic counts. Cache read/write tokens come
// back in usage from the providers.
import { definePlugin } from "../../core/pipeline/define.ts";
import { breakpointError, hasChatCacheMarkers, placeAutoMarkers } from "../../core/prompt-cache/markers.ts";

declare module "../../core/pipeline/context.ts" {
  interface GatewayContext {
    /** The chat body carries cache_control markers (strip them for non-Anthropic upstreams). */
    cacheMarkers?: boolean;
    /** providerOptions.gateway.caching is "auto": place markers (cache points) on bodies translated for Anthropic or Converse. */
    cacheAuto?: boolean;
  }
}

export default definePlugin({
  name: "cache-marker",
  handle(ctx, next) {
    const body = ctx.body;
    const endpoint = ctx.endpoint;
    if (!body || (endpoint !== "messages" && endpoint !== "chat" && endpoint !== "gemini" && endpoint !== "responses")) return next();
    const auto = body.providerOptions?.gateway?.caching === "auto";
    // Gemini and Responses requests carry no markers of their own; auto places them where they are translated to Anthropic.
    if (endpoint === "gemini" || endpoint === "responses") {
      ctx.cacheAuto = auto;
      return next();
    }
    if (endpoint === "messages") {
      const tooMany = breakpointError(body);
      if (tooMany) throw tooMany;
      if (auto) placeAutoMarkers(body);
      // The Messages body's markers do not survive translation to chat: a Converse upstream places its own points.
      ctx.cacheAuto = auto;
    } else {
      ctx.cacheMarkers = hasChatCacheMarkers(body);
      ctx.cacheAuto = auto;
    }
    return next();
  },
});
