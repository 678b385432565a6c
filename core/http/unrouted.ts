// A request no route takes (an unknown path, a method its path does not serve, a path that is not valid
// percent-encoding, an unknown Gemini action): its error envelope, counted in gateway_requests_total under the fixed
// endpoint label "unrouted" — never the client's path, which would give a scanner a series per path — and given an
// access line, so probes and misdirected clients show up like any other request.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Gateway } from "../gateway.ts";
import type { GatewayError } from "../errors.ts";
import { writeWhole } from "./respond.ts";
import { requestIdOf } from "./handle.ts";
import { traceIdOf } from "../observability/index.ts";
import { accessLogOn } from "../observability/access-log-on.ts";
import { wireBytes } from "../observability/wire-bytes.ts";

/** The endpoint label of requests no route took. */
export const UNROUTED = "unrouted";

/**
 * Sends `body` (the error's envelope in the path's protocol) with the error's status, counts it and logs it. On a
 * Messages path (`anthropic`) the request id also goes as Anthropic's `request-id`, as every Messages answer has it.
 */
export function answerUnrouted(gateway: Gateway, req: IncomingMessage, res: ServerResponse, err: GatewayError, body: unknown, anthropic = false): void {
  const requestId = requestIdOf(req);
  const headers: Record<string, string> = { "content-type": "application/json", "x-request-id": requestId, ...err.headers };
  if (anthropic) headers["request-id"] = requestId;
  writeWhole(res, err.status, headers, JSON.stringify(body));
  recordUnrouted(gateway, req, res, requestId, err.status, err.code);
}

/**
 * Counts and logs an answered request no route took. `adminKeyId`: the admin key that asked, for a path under
 * /admin/v1 (core/admin/handle.ts answers those itself, after the admin key check).
 */
export function recordUnrouted(gateway: Gateway, req: IncomingMessage, res: ServerResponse, requestId: string, status: number, errorCode: string | undefined, adminKeyId?: string): void {
  gateway.metrics.requests.add(1, UNROUTED, "", "", String(status));
  if (!accessLogOn(gateway)) return;
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  gateway.log.infoJson("request", JSON.stringify({
    requestId,
    traceId: traceIdOf(req),
    method: req.method,
    path: (q === -1 ? url : url.slice(0, q)).slice(0, 1000), // the client's string: cut short
    endpoint: UNROUTED,
    ...(adminKeyId !== undefined ? { adminKeyId } : {}),
    attempts: [],
    status,
    errorCode,
    outcome: "error",
    stream: false,
    aborted: false,
    ...wireBytes(req, res),
  }));
}
