// One client session on {base_url}/mcp: an SDK Server whose tools, prompts and resources are those of the upstream
// servers the session's project may use, namespaced (server__tool, server__prompt, mcpgw://server/<uri>), and whose
// calls go to the right upstream connection. Each message is handled with the config of the HTTP request that
// carried it, so a reload applies to open sessions at once; progress and cancellation pass through.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema, ErrorCode, GetPromptRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError, ReadResourceRequestSchema,
  type JSONRPCMessage, type Prompt, type Resource, type ResourceTemplate, type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { randomUUID } from "node:crypto";
import type { GatewayContext } from "../pipeline/context.ts";
import type { GatewayHandle } from "../contracts/gateway.ts";
import { mcpOf } from "./registry.ts";
import { serverAllowed, toolAllowed } from "./policy.ts";
import { gatherLists } from "./server-lists.ts";
import { qualify, unqualify, unwrapUri, wrapUri } from "./spec.ts";
import { runToolCall, UnknownToolError, type ToolCaller } from "./tool-call.ts";

type RequestId = string | number;

/** A JSON-RPC answer (a result or an error) to the request of its id. */
function isResponse(m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId } {
  return !("method" in m) && "id" in m && (typeof m.id === "string" || typeof m.id === "number");
}

/** The HTTP request a message came in on, handed to the SDK as authInfo.extra (the SDK passes it to handlers). */
type Extra = { authInfo?: { extra?: Record<string, unknown> } };

function requestOf(extra: Extra): GatewayContext & ToolCaller {
  const ctx = extra.authInfo?.extra?.ctx as (GatewayContext & ToolCaller) | undefined;
  if (!ctx?.auth) throw new McpError(ErrorCode.InternalError, "message without its request");
  return ctx;
}

function unknown(kind: string, name: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Unknown ${kind}: ${name}`);
}

export class McpSession {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly server: Server;
  lastUsed = Date.now();
  /** Requests of this session being handled now: an idle sweep never closes a busy session. */
  busy = 0;
  private unsubscribe?: () => void;
  id?: string;
  /** Requests received and not answered yet (their JSON-RPC ids): what a shutdown's cut answers with its error. */
  private readonly unanswered = new Set<RequestId>();

  constructor(readonly projectId: string, readonly keyId: string, gateway: GatewayHandle, onClosed: (s: McpSession) => void) {
    this.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => { this.id = id; },
    });
    this.server = new Server(
      { name: "model-gateway", version: "1" },
      {
        capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true } },
        instructions: "Tools of several MCP servers behind one gateway; every name is prefixed with its server (server__tool).",
      },
    );
    // Every answer the SDK sends goes through send: its request is no longer one to answer.
    const send = this.transport.send.bind(this.transport);
    this.transport.send = (message, options) => {
      if (isResponse(message)) this.unanswered.delete(message.id);
      return send(message, options);
    };
    this.server.onclose = () => {
      this.unanswered.clear();
      this.unsubscribe?.();
      onClosed(this);
    };
    this.server.onerror = (err) => gateway.log.debug("mcp session error", { error: String(err) });
    this.handlers();
    // Upstream lists changed: tell this client, when the server is one it may see.
    this.unsubscribe = mcpOf(gateway).onListChanged((server, kind, before) => {
      if (!this.id || !(serverAllowed(gateway.config, projectId, server) || (before && serverAllowed(before, projectId, server)))) return;
      const send = kind === "tools" ? this.server.sendToolListChanged() : kind === "prompts" ? this.server.sendPromptListChanged() : this.server.sendResourceListChanged();
      send.catch(() => {});
    });
  }

  /**
   * The ids of the requests among `message` (a POST's one message or batch), now awaiting their answers; a request
   * the client cancels is answered by no one, so it is forgotten.
   */
  received(message: unknown): RequestId[] {
    const ids: RequestId[] = [];
    for (const m of Array.isArray(message) ? message : [message]) {
      if (!m || typeof m !== "object" || typeof m.method !== "string") continue;
      if (m.method === "notifications/cancelled") this.unanswered.delete(m.params?.requestId);
      else if (typeof m.id === "string" || typeof m.id === "number") ids.push(m.id);
    }
    for (const id of ids) this.unanswered.add(id);
    return ids;
  }

  /** The response that carried these requests is over: none of them is answered on it any more. */
  forget(ids: RequestId[]): void {
    for (const id of ids) this.unanswered.delete(id);
  }

  /**
   * Answer those of `ids` still unanswered with a JSON-RPC error (a shutdown cutting the POST that carries them): the
   * transport writes it on their stream, which then ends, and the client is told rather than left waiting. A handler
   * that finishes later finds its request answered (the SDK reports that to onerror).
   */
  answerUnanswered(ids: RequestId[], message: string): void {
    for (const id of ids) {
      if (!this.unanswered.has(id)) continue;
      this.transport.send({ jsonrpc: "2.0", id, error: { code: ErrorCode.ConnectionClosed, message } }).catch(() => {});
    }
  }

  async start(): Promise<void> {
    await this.server.connect(this.transport);
  }

  async close(): Promise<void> {
    await this.server.close().catch(() => {});
  }

  private handlers(): void {
    const s = this.server;
    s.setRequestHandler(ListToolsRequestSchema, async (_req, extra) => {
      const ctx = requestOf(extra);
      const lists = await gatherLists<Tool>(ctx, (u) => u.tools());
      const tools: Tool[] = [];
      for (const { server, items } of lists) {
        for (const t of items) if (toolAllowed(ctx.config, ctx.auth.projectId, server, t.name)) tools.push({ ...t, name: qualify(server, t.name) });
      }
      return { tools };
    });

    s.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const ctx = requestOf(extra);
      const parts = unqualify(req.params.name);
      // A server the project may not see is not one at all; runToolCall refuses a tool the allowlist or the server's
      // own list lacks (UnknownToolError), before calling, counting or recording it.
      if (!parts || !serverAllowed(ctx.config, ctx.auth.projectId, parts[0])) throw unknown("tool", req.params.name);
      const [server, tool] = parts;
      const token = extra._meta?.progressToken;
      try {
        return await runToolCall(ctx, mcpOf(ctx.gateway).upstream(ctx.config, server, ctx.auth.projectId), { server, tool, arguments: req.params.arguments, via: "mcp" }, {
          signal: extra.signal,
          onprogress: token === undefined ? undefined : (p) => {
            extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, ...p } }).catch(() => {});
          },
        });
      } catch (err) {
        throw err instanceof UnknownToolError ? unknown("tool", req.params.name) : err;
      }
    });

    s.setRequestHandler(ListPromptsRequestSchema, async (_req, extra) => {
      const ctx = requestOf(extra);
      const lists = await gatherLists<Prompt>(ctx, (u) => u.prompts());
      return { prompts: lists.flatMap(({ server, items }) => items.map((p) => ({ ...p, name: qualify(server, p.name) }))) };
    });

    s.setRequestHandler(GetPromptRequestSchema, async (req, extra) => {
      const ctx = requestOf(extra);
      const parts = unqualify(req.params.name);
      if (!parts || !serverAllowed(ctx.config, ctx.auth.projectId, parts[0])) throw unknown("prompt", req.params.name);
      const u = mcpOf(ctx.gateway).upstream(ctx.config, parts[0], ctx.auth.projectId);
      if (!u) throw unknown("prompt", req.params.name);
      return u.getPrompt(parts[1], req.params.arguments, extra.signal);
    });

    s.setRequestHandler(ListResourcesRequestSchema, async (_req, extra) => {
      const ctx = requestOf(extra);
      const lists = await gatherLists<Resource>(ctx, (u) => u.resources());
      return { resources: lists.flatMap(({ server, items }) => items.map((r) => ({ ...r, uri: wrapUri(server, r.uri) }))) };
    });

    s.setRequestHandler(ListResourceTemplatesRequestSchema, async (_req, extra) => {
      const ctx = requestOf(extra);
      const lists = await gatherLists<ResourceTemplate>(ctx, (u) => u.resourceTemplates());
      return { resourceTemplates: lists.flatMap(({ server, items }) => items.map((r) => ({ ...r, uriTemplate: wrapUri(server, r.uriTemplate) }))) };
    });

    s.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
      const ctx = requestOf(extra);
      const parts = unwrapUri(req.params.uri);
      if (!parts || !serverAllowed(ctx.config, ctx.auth.projectId, parts[0])) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${req.params.uri}`);
      const u = mcpOf(ctx.gateway).upstream(ctx.config, parts[0], ctx.auth.projectId);
      if (!u) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${req.params.uri}`);
      const r = await u.readResource(parts[1], extra.signal);
      return { ...r, contents: r.contents.map((c) => ({ ...c, uri: wrapUri(parts[0], c.uri) })) };
    });
  }
}
