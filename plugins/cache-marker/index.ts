// cache-marker: prompt-cache breakpoints. Explicit `cache_control` markers pass to native (Anthropic) upstreams;
// with providerOptions.gateway.caching: "auto" the gateway places them itself (see core/prompt-cache/markers.ts). Translation to a
// chat upstream drops them, and chat bodies carrying them are stripped before a non-Anthropic upstream
// (stream-transcoder). Cache read/write tokens come back in usage from the providers.
import { definePlugin } from "../../core/pipeline/define.ts";
import { invalidRequest } from "../../core/errors.ts";
import { countMarkers, hasChatCacheMarkers, MAX_BREAKPOINTS, placeAutoMarkers } from "../../core/prompt-cache/markers.ts";

declare module "../../core/pipeline/context.ts" {
  interface GatewayContext {
    /** The chat body carries cache_control markers (strip them for non-Anthropic upstreams). */
    cacheMarkers?: boolean;
    /** providerOptions.gateway.caching is "auto": place markers on bodies translated to the messages protocol. */
    cacheAuto?: boolean;
  }
}

export default definePlugin({
  name: "cache-marker",
  handle(ctx, next) {
    const body = ctx.body;
    if (!body || (ctx.endpoint !== "messages" && ctx.endpoint !== "chat" && ctx.endpoint !== "gemini")) return next();
    const auto = body.providerOptions?.gateway?.caching === "auto";
    // A Gemini request carries no markers of its own; auto places them where it is translated to Anthropic.
    if (ctx.endpoint === "gemini") {
      ctx.cacheAuto = auto;
      return next();
    }
    if (ctx.endpoint === "messages") {
      if (countMarkers(body) > MAX_BREAKPOINTS) throw invalidRequest(`at most ${MAX_BREAKPOINTS} cache_control breakpoints are allowed`, "cache_control");
      if (auto) placeAutoMarkers(body);
    } else {
      ctx.cacheMarkers = hasChatCacheMarkers(body);
      ctx.cacheAuto = auto;
    }
    return next();
  },
});
