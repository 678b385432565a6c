// Built-in plugins and the default order used when gateway.yaml has no `pipeline:`.
import type { PluginDefinition } from "../core/pipeline/define.ts";
import auth from "./auth/index.ts";
import router from "./router/index.ts";
import fallback from "./fallback/index.ts";
import cacheMarker from "./cache-marker/index.ts";
import streamTranscoder from "./stream-transcoder/index.ts";
import allowlist from "./allowlist/index.ts";
import budget from "./budget/index.ts";
import rateLimit from "./rate-limit/index.ts";
import idempotency from "./idempotency/index.ts";
import responseCache from "./response-cache/index.ts";
import usageMetering from "./usage-metering/index.ts";
import guardrails from "./guardrails/index.ts";

export const builtinPlugins: Record<string, PluginDefinition<any, any>> = {
  [auth.name]: auth,
  [router.name]: router,
  [fallback.name]: fallback,
  [cacheMarker.name]: cacheMarker,
  [streamTranscoder.name]: streamTranscoder,
  [allowlist.name]: allowlist,
  [budget.name]: budget,
  [rateLimit.name]: rateLimit,
  [idempotency.name]: idempotency,
  [responseCache.name]: responseCache,
  [usageMetering.name]: usageMetering,
  [guardrails.name]: guardrails,
};

/** The product card's order. Names not (yet) built in are skipped. */
export const DEFAULT_ORDER = [
  "auth",
  "allowlist",
  "budget",
  "rate-limit",
  "idempotency",
  "response-cache",
  "cache-marker",
  "router",
  "fallback",
  "stream-transcoder",
  "usage-metering",
  // Last: it sees (and redacts) exactly what leaves, and the answer inside metering (a refused answer is billed as used).
  "guardrails",
];

export const defaultPipeline = () => DEFAULT_ORDER.filter((n) => n in builtinPlugins);
