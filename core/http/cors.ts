// Calls from web pages on other origins (server.cors): a browser's preflight is answered here, before any route,
// key check or policy (it carries no key, and is neither billed, rate-limited nor recorded), and every API answer to
// an allowed origin says so, errors before the pipeline included. Unset, nothing here runs and no answer carries a
// CORS header. Only the API (/api/...): the admin API, the console, /metrics and the probes are the operator's.
import type { IncomingMessage, ServerResponse } from "node:http";
import { GatewayError } from "../errors.ts";
import type { CorsPolicy } from "./cors-policy.ts";
import { EXPOSED_HEADERS } from "./cors-headers.ts";
import type { RouteMethods } from "./route-methods.ts";
import { requestIdOf } from "./handle.ts";

/** What the request step decided: go on to the routes, the preflight is answered, or refuse it with this error. */
export type CorsStep = undefined | "answered" | GatewayError;

/**
 * Sets the CORS headers of an API request's answer (kept by every later writeHead, which merges them) and answers a
 * preflight: 204 with the route's methods from an allowed origin, 403 from any other. A preflight for a path no
 * route serves goes on to its 404, which the browser takes as a refusal.
 */
export function crossOrigin(policy: CorsPolicy, req: IncomingMessage, res: ServerResponse, path: string, routes: RouteMethods): CorsStep {
  const preflight = req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
  if (!preflight) return void showToOrigin(policy, req, res, path);
  if (!path.startsWith("/api/")) return undefined;
  res.setHeader("vary", "Origin");
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  if (!policy.origins.allows(origin)) {
    return new GatewayError(403, "FORBIDDEN", `Origin ${JSON.stringify(origin.slice(0, 200))} may not call this gateway from a browser: it is not in server.cors.allow_origins`);
  }
  res.setHeader("access-control-allow-origin", origin);
  const methods = routes.for(path);
  if (!methods.length) return undefined;
  const headers: Record<string, string> = {
    vary: "Origin, Access-Control-Request-Headers",
    "x-request-id": requestIdOf(req),
    "access-control-allow-methods": methods.join(", "),
    "access-control-max-age": policy.maxAge,
  };
  const allowHeaders = policy.headers.allow(req.headers["access-control-request-headers"]);
  if (allowHeaders) headers["access-control-allow-headers"] = allowHeaders;
  res.writeHead(204, headers);
  res.end();
  return "answered";
}

/**
 * Lets the page of an allowed origin read this API answer (and the headers the SDKs read), as every answer does once
 * set here: routed ones, errors before the pipeline and the 503s of a shutdown alike. Any other origin's answer goes
 * out as ever, without the headers, so the browser keeps it from the page.
 */
export function showToOrigin(policy: CorsPolicy, req: IncomingMessage, res: ServerResponse, path: string): void {
  if (!path.startsWith("/api/")) return;
  // The answer depends on the Origin: a cache must not hand one page's answer (or a server's, without one) to another.
  res.setHeader("vary", "Origin");
  const origin = req.headers.origin;
  if (origin === undefined || !policy.origins.allows(origin)) return;
  res.setHeader("access-control-allow-origin", origin);
  res.setHeader("access-control-expose-headers", EXPOSED_HEADERS);
}
