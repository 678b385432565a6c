// One tool call on an upstream MCP server, the same whether it came in on {base_url}/mcp or from the Responses
// API's mcp tool: the key's tool-call rate limit, the server's circuit breaker and timeouts, then a ledger record,
// metrics, an `execute_tool` span under the caller's trace and an access-log line. A server that fails, times out or
// is down is an error result (isError) for the caller, never an exception. A tool of a gateway.yaml server that the
// server does not list, or the project may not use, is refused before the call (UnknownToolError on the MCP endpoint).
import { performance } from "node:perf_hooks";
import { Counter, Histogram, type Registry } from "prom-client";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { AuthInfo, GatewayContext } from "../pipeline/context.ts";
import type { LedgerEntry, LedgerOutcome } from "../store/types.ts";
import { settleWithin } from "../deadline.ts";
import { healthOf } from "../health/index.ts";
import { generationId } from "../http/ids.ts";
import { recordForRequest } from "../metering/meter.ts";
import { accessLogOn } from "../observability/access-log-on.ts";
import { ConnectFailedError, NotConnectedError, type CallOptions, type Upstream } from "./upstream.ts";
import { countList, firstCountOf, waitForList } from "./list-wait.ts";
import { ErrorAnswer } from "./error-answers.ts";
import { qualify } from "./spec.ts";
import { serverAllowed, toolAllowed } from "./policy.ts";

const STORE_WAIT_MS = 5_000;

/** Who is calling: the request that carries the call (its auth, trace and config). */
export type ToolCaller = Pick<GatewayContext, "gateway" | "config" | "requestId" | "trace" | "budget"> & { auth: AuthInfo };

export interface ToolCallRequest {
  server: string;
  tool: string;
  arguments?: Record<string, unknown>;
  /** Where the call came from, for the ledger's endpoint column and the logs: "mcp" or "responses". */
  via: "mcp" | "responses";
  /** Metrics label for the server: a client-supplied URL's label is the client's, so it is not used there. */
  metricServer?: string;
}

type Status = "ok" | "tool_error" | "error" | "timeout" | "cancelled" | "rate_limited" | "unavailable" | "unknown_tool";

/** The metric label of every tool name the server does not list: a client's made-up names are not series of their own. */
export const UNKNOWN_TOOL_LABEL = "(unknown)";
/** A name longer than this (MCP tool names are at most 128 characters) is cut short in the ledger, the log and spans. */
const MAX_NAME = 128;

export function boundedName(s: string): string {
  return s.length > MAX_NAME ? `${s.slice(0, MAX_NAME)}…` : s;
}

/** Thrown on the MCP endpoint for an unknown tool: the spec's answer is the JSON-RPC error -32602, not a tool result. */
export class UnknownToolError extends Error {}

interface ToolMetrics { calls: Counter<"server" | "tool" | "status">; duration: Histogram<"server" | "tool"> }
const metricsByRegistry = new WeakMap<Registry, ToolMetrics>();

function metricsOf(registry: Registry): ToolMetrics {
  let m = metricsByRegistry.get(registry);
  if (!m) {
    m = {
      calls: new Counter({ name: "gateway_mcp_tool_calls_total", help: "MCP tool calls by server, tool and status (ok, tool_error, error, timeout, cancelled, rate_limited, unavailable, unknown_tool); a tool the server does not list is tool=\"(unknown)\".", labelNames: ["server", "tool", "status"] as const, registers: [registry] }),
      duration: new Histogram({ name: "gateway_mcp_tool_call_duration_seconds", help: "MCP tool call duration by server and tool.", labelNames: ["server", "tool"] as const, buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300], registers: [registry] }),
    };
    metricsByRegistry.set(registry, m);
  }
  return m;
}

export function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return settleWithin(p, ms, () => {
    throw new Error(`${what} took longer than ${ms} ms`);
  });
}

/** A refusal, or the call charged to the window and a way to give it back (for a call the server never got). */
interface RateCheck { refused?: string; giveBack?: () => Promise<void> }

/** The key's tool_calls_per_minute (the key's rate_limits, else the project's). */
async function rateLimited(caller: ToolCaller): Promise<RateCheck> {
  const { auth } = caller;
  const project = auth.project.config;
  const key = project.keys.find((k) => k.id === auth.keyId);
  const limit = (key?.rate_limits ?? project.rate_limits)?.tool_calls_per_minute;
  if (!limit) return {};
  const store = caller.gateway.store;
  const window = `key:${auth.projectId}:${auth.keyId}:tool_calls`;
  const r = await withTimeout(store.rateLimit([{ key: window, limit, cost: 1 }], Date.now()), STORE_WAIT_MS, "the rate-limit store");
  if (r.ok) return { giveBack: () => withTimeout(store.rateAdjust(window, limit, -1, Date.now()), STORE_WAIT_MS, "the rate-limit store") };
  const secs = Math.max(1, Math.ceil(r.retryAfterMs / 1000));
  return { refused: `Rate limit reached (tool_calls_per_minute: ${limit}); retry after ${secs}s` };
}

/**
 * Whether a call failed before it reached the server: it could not be started or reached (NotConnectedError, a
 * connect that timed out included), or the SDK's client had no connection ("Not connected").
 */
function notReached(err: unknown): boolean {
  return err instanceof NotConnectedError || (err as Error)?.message === "Not connected";
}

function statusOf(err: unknown, signal?: AbortSignal): Status {
  if (signal?.aborted) return "cancelled";
  if (err instanceof ErrorAnswer) return "error"; // the server's own answer, whatever its words
  const msg = String((err as Error)?.message ?? err);
  return /timed out|took longer|timeout/i.test(msg) ? "timeout" : "error";
}

/**
 * Whether the server lists `req.tool` (or why that could not be told). With no list in hand (a slow server's first,
 * after a connect or a reload), a name of the server's last known list is taken at once rather than waiting for the
 * fresh one, while the server shows life (Upstream.goesOnLastNames: a down or frozen server's list is waited for as
 * ever, bounded); the fresh list goes on, its outcome counted once as a waited one's.
 */
async function nameListed(caller: ToolCaller, upstream: Upstream, req: ToolCallRequest): Promise<boolean | { err: unknown }> {
  const fetching = upstream.tools();
  if (upstream.goesOnLastNames(req.tool)) {
    countList(caller.gateway, req.server, fetching);
    return true;
  }
  return waitForList(caller.gateway, req.server, upstream, fetching, "its tools", false).then((ts) => ts.some((t) => t.name === req.tool), (err: unknown) => ({ err }));
}

const NO_BREAKER = { allow: () => true, record() {}, release() {} };

const HTTP_STATUS: Record<Status, number> = { ok: 200, tool_error: 200, error: 502, timeout: 504, cancelled: 499, rate_limited: 429, unavailable: 503, unknown_tool: 404 };

export async function runToolCall(caller: ToolCaller, upstream: Upstream | undefined, req: ToolCallRequest, o: CallOptions = {}): Promise<CallToolResult> {
  const { gateway } = caller;
  const started = performance.now();
  // Client strings go into the span, the ledger and the log cut short (the full name only to the upstream server).
  const shown = { ...req, server: boundedName(req.server), tool: boundedName(req.tool) };
  const name = qualify(shown.server, shown.tool);
  // A server of gateway.yaml (a client URL's server is the client's own): the project's allowlist and the server's
  // tool list decide which names are called at all, and it has a circuit breaker. A client's server has none: its
  // label is the client's, and its failures must not pause a gateway.yaml server of that name (nor make series).
  const configured = req.metricServer === undefined;
  const breakerModel = `mcp:${req.server}`;
  /** This call, as the circuit breaker knows it: only the call that took a half-open probe's slot frees it. */
  const probe = {};
  const health = configured ? healthOf(gateway) : NO_BREAKER;
  const span = caller.trace?.toolCall(name, { "gateway.mcp.server": shown.server, "gateway.mcp.tool": shown.tool, "mcp.method.name": "tools/call", "gateway.mcp.via": req.via });

  let status: Status;
  let result: CallToolResult;
  let reachedServer = false;
  try {
    const allowed = !configured || toolAllowed(caller.config, caller.auth.projectId, req.server, req.tool);
    const rate: RateCheck = allowed ? await rateLimited(caller).catch((err) => ({ refused: `Tool call refused: the rate-limit store is unavailable (${(err as Error).message})` })) : {};
    // A call the server never got (it is down, or could not be started or reached) does not use up the key's rate.
    const giveBack = () => rate.giveBack?.().catch((err) => gateway.log.debug("tool-call rate not given back", { error: String(err) }));
    if (!allowed) {
      status = "unknown_tool";
      result = errorResult(`Unknown tool: ${name}`);
    } else if (rate.refused) {
      status = "rate_limited";
      result = errorResult(rate.refused);
    } else if (!upstream) {
      await giveBack();
      status = "unavailable";
      result = errorResult(`MCP server "${req.server}" is not available`);
    } else if (!health.allow(breakerModel, req.server, undefined, probe)) {
      await giveBack();
      status = "unavailable";
      result = errorResult(`MCP server "${req.server}" is failing; calls are paused for a while (circuit open)`);
    } else {
      // The server's list (cached) is asked first: a name it does not list is never sent, counted or recorded. It is
      // waited for as a list is (at most timeout_ms, never more than 10 s) and its outcome reaches the breaker from
      // the list itself, once, however many lists and calls waited on it.
      const listed = configured ? await nameListed(caller, upstream, req) : true;
      if (typeof listed === "object") {
        // Never sent: unavailable (or cancelled), not recorded, not counted against the rate.
        await giveBack();
        health.release(breakerModel, req.server, undefined, probe);
        status = o.signal?.aborted ? "cancelled" : "unavailable";
        result = errorResult(status === "cancelled" ? `Tool call to ${name} failed: the call was cancelled` : `MCP server "${req.server}" is not available: ${String((listed.err as Error)?.message ?? listed.err)}`);
      } else if (!listed) {
        await giveBack(); // never sent: not a call against the key's rate
        health.release(breakerModel, req.server, undefined, probe);
        status = "unknown_tool";
        result = errorResult(`Unknown tool: ${name}`);
      } else {
        reachedServer = true;
        try {
          result = await upstream.call(req.tool, req.arguments, o);
          status = result.isError ? "tool_error" : "ok";
          health.record(breakerModel, req.server, true);
        } catch (err) {
          if (notReached(err)) {
            // Never sent (the server could not be reached): unavailable (or cancelled), not recorded, not counted
            // against the rate; the breaker still hears of a server that is down, so one that stays down pauses
            // calls — a connection attempt shared with lists once, whoever heard its failure first.
            reachedServer = false;
            await giveBack();
            status = o.signal?.aborted ? "cancelled" : "unavailable";
            if (status === "unavailable" && (!(err instanceof ConnectFailedError) || firstCountOf(err))) health.record(breakerModel, req.server, false);
            else health.release(breakerModel, req.server, undefined, probe);
            result = errorResult(status === "cancelled" ? `Tool call to ${name} failed: the call was cancelled` : `MCP server "${req.server}" is not available: ${String((err as Error)?.message ?? err)}`);
          } else {
            status = statusOf(err, o.signal);
            if (status === "cancelled") health.release(breakerModel, req.server, undefined, probe);
            // A JSON-RPC error the server answered with: the server is up, the call failed (its caller's, not everyone's).
            else health.record(breakerModel, req.server, err instanceof ErrorAnswer);
            const why = status === "cancelled" ? "the call was cancelled" : String((err as Error)?.message ?? err);
            result = errorResult(`Tool call to ${name} failed: ${why}`);
          }
        }
      }
    }
  } catch (err) {
    status = "error";
    result = errorResult(`Tool call to ${name} failed: ${String((err as Error)?.message ?? err)}`);
  }

  const durationMs = Math.round((performance.now() - started) * 10) / 10;
  const bytes = Buffer.byteLength(JSON.stringify(result));
  // Labels only of names the gateway knows: a configured server, and a tool that server has listed.
  const serverKnown = !!req.metricServer || serverAllowed(caller.config, caller.auth.projectId, req.server);
  const mServer = req.metricServer ?? (serverKnown ? req.server : UNKNOWN_TOOL_LABEL);
  const toolKnown = serverKnown && status !== "unknown_tool" && !!upstream?.listsTool(req.tool);
  const mTool = req.metricServer ?? (toolKnown ? req.tool : UNKNOWN_TOOL_LABEL);
  const m = metricsOf(gateway.metrics.registry);
  m.calls.inc({ server: mServer, tool: mTool, status });
  if (reachedServer) m.duration.observe({ server: mServer, tool: mTool }, durationMs / 1000);
  span?.end(status === "ok" ? undefined : status, { "gateway.mcp.status": status, "gateway.mcp.result_bytes": bytes });
  await record(caller, shown, status, durationMs, bytes, reachedServer);
  accessLine(caller, shown, status, durationMs, bytes);
  if (status === "unknown_tool" && req.via === "mcp") throw new UnknownToolError(`Unknown tool: ${qualify(req.server, req.tool)}`);
  return result;
}

/**
 * The record's provider and model. A gateway.yaml server's call: the server and the tool. A client server_url's: the
 * server and tool names are the client's own, so they are kept apart from every name of the operator's — provider
 * `(client_url)`, model `mcp:<label>__<tool>` (no catalog model id can start `mcp:`) — or a tenant could make a real
 * provider or model look failing in usage and the console.
 */
function ledgerNames(req: ToolCallRequest): { provider: string; model: string } {
  if (req.metricServer === undefined) return { provider: req.server, model: req.tool };
  return { provider: req.metricServer, model: boundedName(`mcp:${qualify(req.server, req.tool)}`) };
}

async function record(caller: ToolCaller, req: ToolCallRequest, status: Status, durationMs: number, bytes: number, reached: boolean): Promise<void> {
  // Like a model request, a call refused before reaching a server (rate limit, circuit, not configured) bills nothing.
  if (!reached) return;
  const { auth, gateway } = caller;
  const outcome: LedgerOutcome = status === "cancelled" ? "aborted" : status === "ok" ? "ok" : "error";
  const entry: LedgerEntry = {
    generationId: generationId(), requestId: caller.requestId, ts: Date.now(), keyId: auth.keyId, project: auth.projectId,
    endpoint: req.via === "mcp" ? "mcp_tool" : "responses_mcp_tool", ...ledgerNames(req), attempts: 1,
    inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0,
    costUsd: "0", costPico: 0n, latencyMs: durationMs, ttftMs: null, status: HTTP_STATUS[status], outcome, sandbox: auth.sandbox, estimated: false,
    toolBytes: bytes,
    ...(caller.config.raw.mcp?.log_arguments ? { toolArguments: JSON.stringify(req.arguments ?? {}) } : {}),
  };
  try {
    await withTimeout(recordForRequest(caller, entry), STORE_WAIT_MS, "the ledger write");
  } catch (err) {
    gateway.log.error("mcp tool call not recorded in the ledger", { requestId: caller.requestId, server: req.server, tool: req.tool, error: String(err) });
  }
}

function accessLine(caller: ToolCaller, req: ToolCallRequest, status: Status, durationMs: number, bytes: number): void {
  const { gateway } = caller;
  if (!accessLogOn(gateway)) return;
  gateway.log.info("tool_call", {
    requestId: caller.requestId,
    traceId: caller.trace?.span.spanContext().traceId,
    project: caller.auth.projectId,
    keyId: caller.auth.keyId,
    via: req.via,
    server: req.server,
    tool: req.tool,
    status,
    durationMs,
    bytes,
  });
}

/** The ledger endpoints tool calls are recorded under (usage-command.ts shows them as `mcp:server/tool`). */
export const TOOL_CALL_ENDPOINTS: readonly string[] = ["mcp_tool", "responses_mcp_tool"];
