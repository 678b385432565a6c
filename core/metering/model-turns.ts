// How many model calls one request may make, each billed with its own usage that the request sums: one, except for
// the Responses `mcp` tool, whose loop (core/responses/mcp-loop.ts) runs up to mcp.max_tool_rounds model turns. The
// budget reserves that many turns' worst case; the meter's usage ceiling counts the turns the loop actually ran.
// A call that needs approval ends the response after its turn (an mcp_approval_request; OpenAI's own loop stops
// there too), so a request none of whose tools can run a call unapproved makes one turn, a follow-up answering an
// approval included (its approved calls run before that turn).
import type { RuntimeConfig } from "../config/runtime.ts";
import { mayRunUnapproved } from "../responses/mcp-tool-rules.ts";

/** mcp.max_tool_rounds unset. */
export const DEFAULT_MAX_TOOL_ROUNDS = 8;

export function maxToolRounds(config: Pick<RuntimeConfig, "raw">): number {
  return config.raw.mcp?.max_tool_rounds ?? DEFAULT_MAX_TOOL_ROUNDS;
}

const mcpTools = (body: any): any[] => (Array.isArray(body?.tools) ? body.tools.filter((t: any) => t?.type === "mcp") : []);

/** A Responses request carrying an `mcp` tool: its answer may take up to max_tool_rounds model turns. */
export function loopsOverMcp(endpoint: string, body: any): boolean {
  return endpoint === "responses" && mcpTools(body).length > 0;
}

/** The most model turns the request may make (the budget reserves each one's worst case). */
export function maxModelTurns(ctx: { endpoint: string; body: any; config: Pick<RuntimeConfig, "raw"> }): number {
  if (!loopsOverMcp(ctx.endpoint, ctx.body) || !mcpTools(ctx.body).some(mayRunUnapproved)) return 1;
  return Math.max(1, maxToolRounds(ctx.config));
}
