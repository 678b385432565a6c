// The Responses API's `mcp` tool run by the gateway (for models reached through translation, and for servers
// named from gateway.yaml by label): each mcp tool becomes the server's tools offered as functions; the items a
// previous turn left (mcp_list_tools, mcp_call, mcp_approval_request / _response) become what the model reads.
import { createHash } from "node:crypto";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { GatewayError } from "../errors.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import { mcpOf } from "../mcp/registry.ts";
import { serverAllowed, toolAllowed } from "../mcp/policy.ts";
import { Upstream } from "../mcp/upstream.ts";
import { checkClientMcpUrl } from "../mcp/client-url.ts";
import { clientServerLog } from "../mcp/client-error.ts";
import { serverList } from "../mcp/list-wait.ts";
import { allowedOf, approvalOf, needsApproval as approvalNeeded, type Allowed, type Approval } from "./mcp-tool-rules.ts";

export interface McpToolSpec {
  index: number;
  label: string;
  /** A client URL (server_url) rather than a server of gateway.yaml. */
  clientUrl: boolean;
  upstream: Upstream;
  allowed?: Allowed;
  approval: Approval;
  /** Tools listed by an earlier turn (its mcp_list_tools item): not listed again. */
  known?: ListedTool[];
}

export interface ListedTool { name: string; description?: string | null; input_schema: unknown; annotations?: unknown }

export interface FunctionRef { spec: McpToolSpec; tool: string }

/** Whether the gateway (not a native upstream) must run this request's mcp tools. */
export function mcpToolsOf(body: any): any[] {
  return Array.isArray(body?.tools) ? body.tools.filter((t: any) => t?.type === "mcp") : [];
}

/** A function name the model can use for `label`'s `tool`: [a-zA-Z0-9_-], at most 64 characters, stable. */
export function functionName(label: string, tool: string): string {
  const name = `${label}__${tool}`.replace(/[^a-zA-Z0-9_-]/g, "_");
  if (name.length <= 64) return name;
  return `${name.slice(0, 55)}_${createHash("sha256").update(`${label}\n${tool}`).digest("hex").slice(0, 8)}`;
}

/** An earlier turn's `mcp_call` item as the model reads it: its function call and that call's output. */
export function mcpCallAsFunction(it: any): any[] {
  return [
    { type: "function_call", call_id: it.id, name: functionName(it.server_label, it.name), arguments: it.arguments ?? "{}" },
    { type: "function_call_output", call_id: it.id, output: it.error ? `Error: ${it.error}` : it.output ?? "" },
  ];
}

/** require_approval, or a 400 naming the field. */
function approvalOrRefusal(t: any, i: number): Approval {
  const approval = approvalOf(t);
  if (approval) return approval;
  throw new GatewayError(400, "INVALID_REQUEST", `tools[${i}].require_approval: must be "always", "never" or {always, never}`, { details: { field: `tools[${i}].require_approval` } });
}

export function needsApproval(spec: McpToolSpec, tool: string): boolean {
  return approvalNeeded(spec.approval, tool);
}

/** Resolve every mcp tool of the request: a client URL is checked (SSRF guard) and connected; a label names a server of gateway.yaml. */
export async function resolveMcpTools(ctx: GatewayContext, tools: any[], closers: Array<() => Promise<void>>): Promise<McpToolSpec[]> {
  const specs: McpToolSpec[] = [];
  const all: any[] = ctx.body.tools;
  for (const t of tools) {
    const i = all.indexOf(t);
    const field = `tools[${i}]`;
    if (typeof t.server_label !== "string" || !t.server_label) {
      throw new GatewayError(400, "INVALID_REQUEST", `${field}.server_label: an mcp tool needs a server_label`, { details: { field: `${field}.server_label` } });
    }
    const label: string = t.server_label;
    let upstream: Upstream | undefined;
    const projectId = ctx.auth!.projectId;
    if (typeof t.server_url === "string" && t.server_url) {
      const checked = await checkClientMcpUrl(t.server_url, ctx.config.server.urlFetch, `${field}.server_url`, ctx.signal);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(t.headers ?? {})) if (typeof v === "string") headers[k] = v;
      if (typeof t.authorization === "string" && t.authorization) headers.authorization = `Bearer ${t.authorization}`;
      upstream = new Upstream({ kind: "http", name: label, url: checked.url.href, transport: "streamable_http", headers, timeoutMs: 30_000, maxTotalMs: 300_000, maxAnswerBytes: ctx.config.raw.mcp?.max_result_bytes },
        clientServerLog(ctx.gateway.log, { requestId: ctx.requestId, project: projectId }), () => {}, checked.fetch);
      const u = upstream;
      closers.push(async () => { await u.close(); await checked.close(); });
    } else if (t.connector_id) {
      throw new GatewayError(400, "INVALID_REQUEST", `${field}.connector_id: connectors are OpenAI's own; this model is served through the gateway, which reaches MCP servers by server_url or by a server_label of gateway.yaml`, { details: { field: `${field}.connector_id` } });
    } else {
      // gateway.yaml's servers run for real, with the gateway's credentials to them: never for a sandbox key (the
      // MCP endpoint refuses one as well). A server_url of the client's own is its own business.
      if (ctx.auth!.sandbox) {
        throw new GatewayError(400, "INVALID_REQUEST", `${field}.server_label: a sandbox key cannot use gateway.yaml's MCP servers (their tools run for real); use a live key, or a server_url of your own`, { details: { field: `${field}.server_label` } });
      }
      if (!serverAllowed(ctx.config, projectId, label)) {
        throw new GatewayError(400, "INVALID_REQUEST", `${field}.server_label: no MCP server "${label}" is available to this project (give a server_url, or name a server of gateway.yaml's mcp_servers)`, { details: { field: `${field}.server_label` } });
      }
      // Held to the request's end: a reload meanwhile closes a changed server's connection only after this
      // request's calls (requests in flight finish on the config they started with).
      const held = mcpOf(ctx.gateway).hold(ctx.config, label, projectId);
      if (!held) throw new GatewayError(400, "INVALID_REQUEST", `${field}.server_label: MCP server "${label}" is not available`, { details: { field: `${field}.server_label` } });
      closers.push(async () => held.release());
      upstream = held.upstream;
    }
    if (specs.some((s) => s.label === label)) {
      throw new GatewayError(400, "INVALID_REQUEST", `${field}.server_label: "${label}" is used by two mcp tools`, { details: { field: `${field}.server_label` } });
    }
    specs.push({ index: i, label, clientUrl: !!t.server_url, upstream, allowed: allowedOf(t), approval: approvalOrRefusal(t, i) });
  }
  return specs;
}

/**
 * A server's tools as an mcp_list_tools item holds them, filtered by allowed_tools and the project's allowlist. A
 * gateway.yaml server's list is had as the MCP endpoint's lists are: refused at once when its circuit is open
 * (CircuitOpenError), waited for at most 10 s, counted by its breaker. A client URL's server is the request's own
 * (no breaker, no connection shared): its list waits its own timeout.
 */
export async function listFor(ctx: GatewayContext, spec: McpToolSpec): Promise<ListedTool[]> {
  const tools: Tool[] = spec.clientUrl ? await spec.upstream.tools() : await serverList(ctx.gateway, spec.label, spec.upstream, (u) => u.tools(), "its tools");
  return tools
    .filter((t) => !spec.allowed?.names || spec.allowed.names.includes(t.name))
    .filter((t) => !spec.allowed?.readOnly || (t.annotations as any)?.readOnlyHint === true)
    .filter((t) => spec.clientUrl || toolAllowed(ctx.config, ctx.auth!.projectId, spec.label, t.name))
    .map((t) => ({ name: t.name, description: t.description ?? null, input_schema: t.inputSchema, annotations: t.annotations ?? null }));
}

/** The function tools that stand for a server's tools, and the name map back. */
export function asFunctions(spec: McpToolSpec, listed: ListedTool[], refs: Map<string, FunctionRef>): any[] {
  return listed.map((t) => {
    const name = functionName(spec.label, t.name);
    refs.set(name, { spec, tool: t.name });
    return { type: "function", name, description: t.description ?? `${t.name} (MCP server ${spec.label})`, parameters: t.input_schema ?? { type: "object", properties: {} }, strict: false };
  });
}
