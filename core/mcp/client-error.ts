// A client's own MCP server (a Responses `mcp` tool's server_url) may be any URL on a host in
// server.url_fetch.allow_hosts, where internal services also listen. The MCP SDK's error text carries what such a
// URL answered (an admin API's "Missing admin key: …", a metrics port's 404 page, a content type), so the tenant is
// told only the status or that no MCP answer came; the caller logs the SDK's text for the operator.

import type { Logger } from "../log.ts";

/** Whether the MCP transport failed on an HTTP answer (its text then quotes that answer's body or content type). */
function httpFailure(err: unknown): boolean {
  const message = (err as Error)?.message ?? "";
  return /^(Streamable HTTP error|SSE error): |^Error POSTing to endpoint \(HTTP \d+\)/.test(message);
}

/** The HTTP status of such a failure, when it names one. */
function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === "number" && code >= 100 && code <= 599) return code;
  const m = /\(HTTP (\d{3})\)/.exec((err as Error)?.message ?? "");
  return m ? Number(m[1]) : undefined;
}

function neutral(err: unknown): string {
  const status = statusOf(err);
  return status ? `the server answered HTTP ${status}, not as an MCP server` : "the server did not answer as an MCP server";
}

/**
 * What a failed connection to a client's server may say: the gateway's own words (a timeout, a cancel, an origin
 * refused) as they are, an HTTP answer as its status, anything else (a refused port, a TLS failure, a body that is
 * not JSON-RPC) as one neutral phrase.
 */
export function clientConnectError(err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  if (/ took longer than \d+ ms$/.test(message) || message === "cancelled" || /sent the gateway to another origin/.test(message)) return message;
  if (httpFailure(err)) return neutral(err);
  return "the server could not be reached or did not answer as an MCP server";
}

/** A list or a call on a connected client's server: an HTTP failure becomes its status; the server's own JSON-RPC
 *  answers and the gateway's own errors pass as they are. */
export function clientCallError(err: unknown): unknown {
  return httpFailure(err) ? new Error(neutral(err)) : err;
}

/**
 * What lies under a connection failure's own words (undici's "fetch failed" wraps the socket's ECONNREFUSED, a
 * certificate's failure): for the operator's log line, never the tenant. Undefined when nothing is wrapped.
 */
export function connectCause(err: unknown): string | undefined {
  const parts: string[] = [];
  let e = (err as { cause?: unknown } | undefined)?.cause;
  for (let depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    const { message, code } = e as { message?: unknown; code?: unknown };
    const text = typeof message === "string" ? message : String(e);
    parts.push(typeof code === "string" && !text.includes(code) ? `${text} (${code})` : text);
    e = (e as { cause?: unknown }).cause;
  }
  return parts.length ? parts.join(": ").slice(0, 500) : undefined;
}

/** A client's server's log lines name the request and project: its label alone is the tenant's own word. */
export function clientServerLog(log: Logger, fields: { requestId: string; project: string }): Logger {
  const add = (f?: Record<string, unknown>) => ({ ...fields, ...f });
  return {
    debug: (msg, f) => log.debug(msg, add(f)),
    info: (msg, f) => log.info(msg, add(f)),
    warn: (msg, f) => log.warn(msg, add(f)),
    error: (msg, f) => log.error(msg, add(f)),
    infoJson: (msg, json) => log.info(msg, add(JSON.parse(json) as Record<string, unknown>)),
    enabled: (level) => log.enabled(level),
    close: async () => {}, // the gateway's logger, closed by the gateway
  };
}
