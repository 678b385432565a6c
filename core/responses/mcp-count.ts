// A count of a Responses request (POST /responses/input_tokens) whose `mcp` tools the gateway runs: the body as
// create's first model turn sends it (mcp-loop.ts), so the count is of the same request: each server's tools listed
// (or taken from an earlier turn's mcp_list_tools item) and offered as functions, an mcp tool_choice made the
// function or "required", and the earlier turns' mcp items made what the model reads. No tool runs for a count: an
// approved call waiting in the input is counted as its call with an empty result (its result is not known before it
// runs). Where the upstream runs the tool itself (a native OpenAI target, server_url tools only), the body stays.
import { GatewayError } from "../errors.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import { gatewayRunsMcp } from "./mcp-loop.ts";
import { CircuitOpenError } from "../mcp/list-wait.ts";
import { asFunctions, functionName, listFor, mcpCallAsFunction, mcpToolsOf, resolveMcpTools, type FunctionRef, type ListedTool, type McpToolSpec } from "./mcp-tools.ts";

/** The input items as the model reads them after mcp-loop's prepare (no call run). */
function modelInput(items: any[], specs: McpToolSpec[]): any[] {
  const answers = new Map<string, any>();
  for (const it of items) if (it?.type === "mcp_approval_response" && typeof it.approval_request_id === "string") answers.set(it.approval_request_id, it);
  const out: any[] = [];
  for (const it of items) {
    switch (it?.type) {
      case "mcp_list_tools":
      case "mcp_approval_response":
        break;
      case "mcp_call":
        out.push(...mcpCallAsFunction(it));
        break;
      case "mcp_approval_request": {
        const answer = answers.get(it.id);
        if (!answer) break; // still unanswered: the model does not see it
        const name = functionName(it.server_label, it.name);
        const approved = answer.approve === true && specs.some((s) => s.label === it.server_label);
        const why = typeof answer.reason === "string" && answer.reason ? `: ${answer.reason}` : "";
        out.push({ type: "function_call", call_id: it.id, name, arguments: it.arguments ?? "{}" },
          { type: "function_call_output", call_id: it.id, output: approved ? "" : `The user did not approve this tool call${why}` });
        break;
      }
      default:
        out.push(it);
    }
  }
  return out;
}

/** A server's tools: an earlier turn's listing, else listed now (a failure is the 502 create answers). */
async function toolsOf(ctx: GatewayContext, spec: McpToolSpec, items: any[]): Promise<ListedTool[]> {
  const known = items.find((it) => it?.type === "mcp_list_tools" && it.server_label === spec.label && Array.isArray(it.tools));
  if (known) return known.tools;
  try {
    return await listFor(ctx, spec);
  } catch (err) {
    throw new GatewayError(502, "UPSTREAM_ERROR", `tools[${spec.index}]: listing the tools of MCP server "${spec.label}" failed: ${(err as Error).message ?? err}`, {
      details: { field: `tools[${spec.index}]` },
      retryAfter: err instanceof CircuitOpenError ? err.retryAfterMs / 1000 : undefined,
    });
  }
}

/**
 * Rewrite ctx.body as create's first model turn sends it when the gateway runs its mcp tools; returns whether it did
 * (each attempt then gets this body: create never continues such a request by the upstream's own id).
 */
export async function mcpAsCreateSends(ctx: GatewayContext): Promise<boolean> {
  if (!gatewayRunsMcp(ctx)) return false;
  if (!ctx.auth) throw new GatewayError(401, "INVALID_API_KEY", "The mcp tool needs a project key");
  const closers: Array<() => Promise<void>> = [];
  ctx.onFinish(async () => { for (const c of closers) await c().catch(() => {}); });
  const body = ctx.body;
  const specs = await resolveMcpTools(ctx, mcpToolsOf(body), closers);
  const raw = body.input;
  const items: any[] = typeof raw === "string" ? [{ role: "user", content: raw }] : Array.isArray(raw) ? raw : [];
  const refs = new Map<string, FunctionRef>();
  const functions: any[] = [];
  for (const spec of specs) functions.push(...asFunctions(spec, await toolsOf(ctx, spec, items), refs));
  const choice = body.tool_choice;
  ctx.body = {
    ...body,
    input: modelInput(items, specs),
    tools: [...body.tools.filter((t: any) => t?.type !== "mcp"), ...functions],
    ...(choice && typeof choice === "object" && choice.type === "mcp"
      ? { tool_choice: typeof choice.name === "string" ? { type: "function", name: functionName(choice.server_label, choice.name) } : "required" }
      : {}),
  };
  return true;
}
