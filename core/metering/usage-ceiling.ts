// The most one request can truly have used: what keeps an upstream's absurd figures (1e308 tokens) from being
// billed at MAX_USAGE_TOKENS, far beyond the request's reservation. Output: what the request asked the serving
// upstream for (the same figure the budget reserved, request-size.ts), else the model's maximum output; input (with
// cache reads and writes): the model's context window (its long one only for a request that opens it,
// context-window.ts); each times the model calls the request made (modelCalls: the
// mcp loop's turns, times what server tools may loop within one). An embeddings batch or a rerank: what
// batch-bounds.ts allows its body. The budget plugin's worst case reads the same sources, so a request never settles
// above what it reserved.
import type { GatewayContext } from "../pipeline/context.ts";
import type { Target } from "../contracts/provider.ts";
import { outputTokensOn } from "./request-size.ts";
import type { AskingProtocol } from "./output-limit.ts";
import { boundWebSearches, DEFAULT_WEB_SEARCH_USES, usesServerTools } from "./server-tools.ts";
import { embeddingsInputBound, rerankInputBound } from "./batch-bounds.ts";
import { maxToolRounds } from "./model-turns.ts";
import { contextWindowOn } from "./context-window.ts";

/** The endpoint that served (or last tried) the request. */
export function servedTarget(ctx: GatewayContext): Target | undefined {
  const last = ctx.attempts[ctx.attempts.length - 1];
  if (!last) return undefined;
  return ctx.targets.find((t) => t.provider === last.provider && t.modelId === last.model) ?? ctx.targets[0];
}

export interface UsageCeiling {
  /** Input, cache-read and cache-write tokens together. */
  input?: number;
  /** Output tokens, reasoning included. */
  output?: number;
}

const LANGUAGE = new Set(["chat", "messages", "responses", "gemini"]);

const positive = (n: number | undefined) => (n !== undefined && Number.isFinite(n) && n > 0 ? n : undefined);

/** The ceiling for one request's billed usage; empty where nothing bounds it (then MAX_USAGE_TOKENS applies). */
export function usageCeiling(ctx: GatewayContext): UsageCeiling {
  if (ctx.endpoint === "embeddings" || ctx.endpoint === "rerank") return batchCeiling(ctx);
  // Images, videos: no token ceiling (their units are capped by MAX_USAGE_UNITS alone).
  if (!LANGUAGE.has(ctx.endpoint)) return {};
  const target = servedTarget(ctx);
  if (!target) return {};
  const calls = modelCalls(ctx);
  const window = contextWindowOn(ctx, target);
  const input = positive(window);
  const output = positive(outputTokensOn(ctx, target, target.maxTokens ?? window));
  return { input: input && input * calls, output: output && output * calls };
}

/** A batch's input is not bounded by one context window: each input is, or each query-document pair. */
function batchCeiling(ctx: GatewayContext): UsageCeiling {
  const input = ctx.endpoint === "embeddings" ? embeddingsInputBound(ctx.body, servedTarget(ctx)?.contextWindow) : rerankInputBound(ctx.body);
  return input === undefined ? {} : { input };
}

/**
 * How many model calls one request's usage may add up. Each turn the Responses mcp loop ran (ctx.modelTurns; it
 * rewrites the body's mcp tools as functions, so the body no longer shows the loop) is a call; within a turn, tools
 * that loop inside one upstream call multiply it — a provider's server tools (each web search or fetch is another
 * pass over the context, all in one usage, as each tool call of Claude's MCP connector), or an mcp tool a native
 * upstream runs (mcp.max_tool_rounds). A ceiling of one call would under-bill those.
 */
function modelCalls(ctx: GatewayContext): number {
  const turns = Math.max(1, ctx.modelTurns ?? 1);
  const client = ctx.endpoint as AskingProtocol;
  if (!usesServerTools(ctx.body, client)) return turns;
  return turns * (1 + Math.max(maxToolRounds(ctx.config), DEFAULT_WEB_SEARCH_USES, boundWebSearches(ctx.body, client)));
}
