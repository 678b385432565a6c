// How many model calls one request may make, each billed with its own usage that the request sums: one, except for
// the Responses `mcp` tool, whose loop (core/responses/mcp-loop.ts) runs up to mcp.max_tool_rounds model turns. The
// budget reserves that many turns' worst case; the meter's usage ceiling counts the turns the loop actually ran.
import type { RuntimeConfig } from "../config/runtime.ts";

/** mcp.max_tool_rounds unset. */
export const DEFAULT_MAX_TOOL_ROUNDS = 8;

export function maxToolRounds(config: Pick<RuntimeConfig, "raw">): number {
  return config.raw.mcp?.max_tool_rounds ?? DEFAULT_MAX_TOOL_ROUNDS;
}

/** A Responses request carrying an `mcp` tool: its answer may take up to max_tool_rounds model turns. */
export function loopsOverMcp(endpoint: string, body: any): boolean {
  return endpoint === "responses" && Array.isArray(body?.tools) && body.tools.some((t: any) => t?.type === "mcp");
}

/** The most model turns the request may make (the budget reserves each one's worst case). */
export function maxModelTurns(ctx: { endpoint: string; body: any; config: Pick<RuntimeConfig, "raw"> }): number {
  return loopsOverMcp(ctx.endpoint, ctx.body) ? Math.max(1, maxToolRounds(ctx.config)) : 1;
}
