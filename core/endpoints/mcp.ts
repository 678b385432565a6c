// {base_url}/mcp (and /api/v1/mcp, for clients configured with the SDKs' base URL): the gateway as one MCP server
// over Streamable HTTP. Authenticated by the pipeline like every endpoint (a project key); the JSON-RPC body is
// taken off ctx.body before the model plugins run, so budget, routing and metering see no model request. Live keys
// only: a sandbox key (mg_test_…) is refused with 403, its tools would run for real. Sessions
// belong to the key that opened them, live across config reloads, and end on DELETE, when idle for
// mcp.session_idle_ms, or when more than mcp.max_sessions are open (the idle-longest of the key holding the most goes).
import type { EndpointSpec } from "./spec.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import type { GatewayHandle } from "../contracts/gateway.ts";
import type { McpSession } from "../mcp/session.ts";
import type { GatewayError } from "../errors.ts";
import { SessionTable } from "./mcp-session-table.ts";

declare module "../pipeline/context.ts" {
  interface GatewayContext {
    /** The JSON-RPC message(s) of an MCP POST. */
    mcpMessage?: unknown;
  }
}

let sessionModule: Promise<typeof import("../mcp/session.ts")> | undefined;
/** The session (and the MCP SDK's server side under it) is loaded by the first initialize: a gateway no MCP client
 * talks to does not carry the SDK and zod (~7 MB of heap, ~20 MB of RSS). */
const loadSession = () => (sessionModule ??= import("../mcp/session.ts"));

const SWEEP_MS = 30_000;
/** Headers the MCP transport reads; nothing else of the client's request is handed to it. */
const PASSED = ["accept", "content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id"];

/** The gateway's session table (mcp-session-table.ts), swept for idle sessions and emptied when the gateway closes. */
class Sessions extends SessionTable<McpSession> {
  private readonly sweeper: NodeJS.Timeout;

  constructor(gateway: GatewayHandle) {
    super(() => ({
      maxSessions: gateway.config.raw.mcp?.max_sessions ?? 1000,
      idleMs: gateway.config.raw.mcp?.session_idle_ms ?? 1_800_000,
    }));
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
    gateway.onClose(() => this.closeAll());
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all(this.takeAll().map((s) => s.close()));
  }
}

const byGateway = new WeakMap<GatewayHandle, Sessions>();

function sessionsOf(gateway: GatewayHandle): Sessions {
  let s = byGateway.get(gateway);
  if (!s) byGateway.set(gateway, (s = new Sessions(gateway)));
  return s;
}

/** A JSON-RPC error answer of the transport's own shape (the status tells the client what to do: 404 = start over). */
function rpcError(ctx: GatewayContext, status: number, code: number, message: string): void {
  const body = new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
  ctx.response = { kind: "bytes", status, contentType: "application/json", body };
}

function isInitialize(message: unknown): boolean {
  const one = (m: any) => m && typeof m === "object" && m.method === "initialize";
  return Array.isArray(message) ? message.some(one) : one(message);
}

async function terminal(ctx: GatewayContext): Promise<void> {
  const auth = ctx.auth;
  if (!auth) {
    rpcError(ctx, 401, -32001, "MCP needs a project key (Authorization: Bearer mg_live_…)");
    return;
  }
  // A sandbox key reaches only the simulator, and there is no simulated MCP server: every tool here runs for real,
  // on the operator's servers with the gateway's credentials to them. Refused before any session (an id a sandbox key
  // opened earlier is refused too), so it can neither list nor call anything.
  if (auth.sandbox) {
    rpcError(ctx, 403, -32001, "MCP tools run for real (on the gateway's MCP servers, with its credentials): they need a live key (mg_live_…); sandbox keys (mg_test_…) reach only the simulator");
    return;
  }
  const sessions = sessionsOf(ctx.gateway);
  const sid = ctx.headers["mcp-session-id"];
  let session: McpSession | undefined;
  let opened = false;
  if (typeof sid === "string" && sid) {
    session = sessions.get(sid);
    // Another key's session is as unknown as an expired one: its id tells the caller nothing.
    if (!session || session.projectId !== auth.projectId || session.keyId !== auth.keyId) {
      rpcError(ctx, 404, -32001, "Session not found (it ended or expired); start a new one with initialize");
      return;
    }
  } else if (ctx.method === "POST" && isInitialize(ctx.mcpMessage)) {
    const { McpSession } = await loadSession();
    session = new McpSession(auth.projectId, auth.keyId, ctx.gateway, (s) => sessions.remove(s));
    await session.start();
    opened = true;
  } else {
    rpcError(ctx, 400, -32000, "Bad Request: send the Mcp-Session-Id header the initialize response gave (or POST initialize to start a session)");
    return;
  }

  const headers = new Headers();
  for (const name of PASSED) {
    const v = ctx.headers[name];
    if (typeof v === "string") headers.set(name, v);
  }
  const request = new Request(`http://gateway${ctx.path.split("?")[0]}`, { method: ctx.method, headers });
  // The requests this POST carries: a shutdown that cuts it answers those still unanswered with its error.
  const requests = ctx.method === "POST" ? session.received(ctx.mcpMessage) : [];
  const asked = session;
  if (requests.length) ctx.onFinish(() => asked.forget(requests)); // answered, or no stream left to answer them on
  session.busy++;
  sessions.touch(session);
  let response: Response;
  try {
    response = await session.transport.handleRequest(request, {
      parsedBody: ctx.method === "POST" ? ctx.mcpMessage : undefined,
      // The SDK hands this to the handlers of the messages in this request: they act with its auth, config and trace.
      authInfo: { token: "", clientId: auth.keyId, scopes: [], extra: { ctx } },
    });
  } finally {
    session.busy--;
    sessions.touch(session);
  }
  // Only the initialize that opened a session adds it: a DELETE has taken its session out of the table by now, and
  // adding it back kept a closed session there for good.
  if (opened) {
    if (!session.id && session.transport.sessionId) session.id = session.transport.sessionId;
    if (session.id && response.ok) sessions.add(session);
    else void session.close(); // an initialize that failed leaves nothing behind
  }
  ctx.response = {
    kind: "web", status: response.status, response,
    ...(requests.length ? { onCut: (cut: GatewayError) => asked.answerUnanswered(requests, cut.message) } : {}),
  };
}

function prepare(ctx: GatewayContext): void {
  ctx.mcpMessage = ctx.body;
  ctx.body = undefined;
}

const ROUTES = ["/api/mcp", "/api/v1/mcp"];
const METHODS = ["POST", "GET", "DELETE"] as const;

/** What each method sends and gets, for /api/openapi.json (the errors: core/openapi-errors.ts mcpErrors). */
const OPENAPI = {
  POST: {
    summary: "MCP (Streamable HTTP): send JSON-RPC messages to the gateway's MCP server",
    requestSchema: "McpJsonRpcMessage",
    streamSchema: "McpJsonRpcMessage",
    headers: ["Mcp-Session-Id", "MCP-Protocol-Version"],
    responseHeaders: ["Mcp-Session-Id"],
    accepted: "Only notifications or responses were sent: nothing to answer",
  },
  GET: {
    summary: "MCP (Streamable HTTP): open the session's server-to-client event stream",
    streamSchema: "McpJsonRpcMessage",
    headers: ["Mcp-Session-Id", "MCP-Protocol-Version", "Last-Event-ID"],
  },
  DELETE: { summary: "MCP (Streamable HTTP): end the session", headers: ["Mcp-Session-Id", "MCP-Protocol-Version"] },
} satisfies Record<(typeof METHODS)[number], EndpointSpec["openapi"]>;

export const mcpEndpoints: EndpointSpec[] = ROUTES.flatMap((route) => METHODS.map((method): EndpointSpec => ({
  kind: "mcp",
  method,
  route,
  protocol: "openai",
  prepare,
  terminal,
  openapi: { ...OPENAPI[method], operationId: `${method.toLowerCase()}_mcp${route === "/api/mcp" ? "" : "_v1"}`, tag: "MCP" },
})));
