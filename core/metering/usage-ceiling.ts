// The most one request can truly have used: what keeps an upstream's absurd figures (1e308 tokens) from being
// billed at MAX_USAGE_TOKENS, far beyond the request's reservation. Output: what the request asked the serving
// upstream for (the same figure the budget reserved, request-size.ts), else the model's maximum output; input (with
// cache reads and writes): the model's context window (its long one only for a request that opens it,
// context-window.ts); each times the model calls the request made (modelCalls: the
// mcp loop's turns, times what server tools may loop within one, serverToolRounds). An embeddings batch or a rerank:
// what batch-bounds.ts allows its body. The budget plugin's worst case reads the same sources (maxModelCalls for the
// calls), so a request never settles above what it reserved.
import type { GatewayContext } from "../pipeline/context.ts";
import type { Target } from "../contracts/provider.ts";
import { outputTokensOn } from "./request-size.ts";
import type { AskingProtocol } from "./output-limit.ts";
import { serverToolRounds } from "./server-tools.ts";
import { embeddingsInputBound, rerankInputBound } from "./batch-bounds.ts";
import { loopsOverMcp, maxModelTurns } from "./model-turns.ts";
import type { RuntimeConfig } from "../config/runtime.ts";
import { contextWindowOn } from "./context-window.ts";
import { attemptTarget } from "../pipeline/attempt-target.ts";

/**
 * The endpoint that served (or last tried) the request: the one its last attempt called. What the ledger, the
 * budget, /metrics, x-mg-cost-usd and the access line all price by, so they agree where a model has two endpoints
 * on one provider. A record dispatch did not make (a hand-built context) is matched by provider and model.
 */
export function servedTarget(ctx: GatewayContext): Target | undefined {
  const last = ctx.attempts[ctx.attempts.length - 1];
  if (!last) return undefined;
  return attemptTarget(last) ?? ctx.targets.find((t) => t.provider === last.provider && t.modelId === last.model) ?? ctx.targets[0];
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
  const turns = Math.max(1, ctx.modelTurns ?? 1);
  const calls = turns * callsPerTurn(ctx.endpoint, ctx.body, ctx.config);
  const window = contextWindowOn(ctx, target);
  const input = positive(window);
  const output = positive(outputTokensOn(ctx, target, target.maxTokens ?? window));
  // Every model call re-reads the context; the output limit bounds each upstream call whole, its server tools' passes
  // together (max_tokens, max_output_tokens are per response), so output counts once per turn.
  return { input: input && input * calls, output: output && output * turns };
}

/** A batch's input is not bounded by one context window: each input is, or each query-document pair. */
function batchCeiling(ctx: GatewayContext): UsageCeiling {
  const input = ctx.endpoint === "embeddings" ? embeddingsInputBound(ctx.body, servedTarget(ctx)?.contextWindow) : rerankInputBound(ctx.body);
  return input === undefined ? {} : { input };
}

/**
 * One upstream call's model calls: its first pass and each server-tool round (server-tools.ts). Each turn the
 * Responses mcp loop ran (ctx.modelTurns; it rewrites the body's mcp tools as functions, so the body no longer shows
 * the loop) is an upstream call; within it, tools that loop inside the call multiply its input — a provider's server
 * tools (each web search or fetch is another pass over the context, all in one usage, as each tool call of Claude's
 * MCP connector), or an mcp tool a native upstream runs. A ceiling of one call would under-bill those.
 */
function callsPerTurn(endpoint: string, body: any, config: Pick<RuntimeConfig, "raw">): number {
  return LANGUAGE.has(endpoint) ? 1 + serverToolRounds(body, endpoint as AskingProtocol, config).rounds : 1;
}

/**
 * What the budget reserves for: the most model calls a request may make (each its input), and of them the mcp loop's
 * turns (each its output).
 */
export interface ModelCalls {
  calls: number;
  /** The Responses mcp loop's turns (model-turns.ts); calls are these times each turn's server-tool calls. */
  turns: number;
  /**
   * The most calls one upstream call's usage sums (its server tools'): a long-prompt tier is judged on that usage
   * whole, where the mcp loop's turns are each judged on their own (core/money/long-context.ts).
   */
  perUpstreamCall: number;
}

/**
 * Before the request runs, by the rule usageCeiling bills by: the mcp loop's most turns, each with its server tools'
 * calls (the mcp tools are functions in each turn's body then), or, where a native upstream runs the mcp tool
 * itself (core/responses/mcp-loop.ts, which upstream serves is not known yet), one call with the mcp tool among its
 * server tools: whichever is more.
 */
export function maxModelCalls(ctx: Pick<GatewayContext, "endpoint" | "body" | "config">): ModelCalls {
  const perTurn = callsPerTurn(ctx.endpoint, ctx.body, ctx.config);
  if (!loopsOverMcp(ctx.endpoint, ctx.body)) return { calls: perTurn, turns: 1, perUpstreamCall: perTurn };
  const turns = maxModelTurns(ctx);
  const mcp = (t: any) => t?.type === "mcp";
  const eachTurn = callsPerTurn(ctx.endpoint, { ...ctx.body, tools: ctx.body.tools.filter((t: any) => !mcp(t)) }, ctx.config);
  // Only tools an upstream can reach (server_url, connector_id) may be passed through.
  const native = ctx.body.tools.filter(mcp).every((t: any) => (typeof t.server_url === "string" && t.server_url) || t.connector_id);
  if (!native) return { calls: turns * eachTurn, turns, perUpstreamCall: eachTurn };
  return { calls: Math.max(turns * eachTurn, perTurn), turns, perUpstreamCall: Math.max(eachTurn, perTurn) };
}
