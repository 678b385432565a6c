// One admin request, with the public API's HTTP hardening: the key is checked from the headers before any byte of
// the body is read (a client that sent Expect: 100-continue is told to send it only then; an answer given without
// reading the body closes the connection), the body is size-limited JSON validated against its schema, every error
// is the spec's envelope, a shutdown waits for it. Admin requests are not metered to any project's ledger, but each
// has its access-log line (endpoint "admin", the admin key's id, never the key).
import type { IncomingMessage, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import type { Gateway } from "../gateway.ts";
import { GatewayError, toGatewayError } from "../errors.ts";
import { readJsonBody } from "../http/body.ts";
import { requestIdOf } from "../http/handle.ts";
import { validationError } from "../http/validate.ts";
import { RequestAbort } from "../net/request-abort.ts";
import { authenticateAdmin, requireScope } from "./auth.ts";
import type { AdminRoute } from "./route.ts";
import type { AdminKeyRuntime } from "../config/runtime.ts";

function hasBody(req: IncomingMessage): boolean {
  const len = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (len !== undefined && len !== "0");
}

export async function handleAdmin(gateway: Gateway, route: AdminRoute, req: IncomingMessage, res: ServerResponse, params: Record<string, string>): Promise<void> {
  const startedAt = performance.now();
  const requestId = requestIdOf(req);
  const controller = new RequestAbort();
  gateway.inflight.enter(controller);
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  let admin: AdminKeyRuntime | undefined;
  let bodyRead = route.method === "GET";
  let status = 500;
  let error: GatewayError | undefined;
  const headers: Record<string, string> = { "x-request-id": requestId, "cache-control": "no-store" };
  try {
    admin = authenticateAdmin(gateway.config, req.headers);
    requireScope(admin, route.scope);
    let body: unknown;
    if (route.method !== "GET") {
      if (route.bodyOptional && !hasBody(req)) {
        body = {};
        bodyRead = true;
      } else {
        if (req.headers.expect?.toLowerCase() === "100-continue") {
          res.removeHeader("connection");
          res.writeContinue();
        }
        body = await readJsonBody(req, gateway.config.server.maxBodyBytes, "INVALID_REQUEST");
        bodyRead = true;
      }
      if (route.validate && !route.validate(body)) throw validationError(route.validate, "INVALID_REQUEST");
    }
    const answer = await route.handle({ gateway, admin, params, query: new URLSearchParams(q === -1 ? "" : url.slice(q + 1)), body, requestId });
    status = answer.status ?? 200;
    if (!res.headersSent && !res.destroyed) {
      res.writeHead(status, { ...headers, "content-type": "application/json" });
      res.end(JSON.stringify(answer.body));
    }
  } catch (e) {
    error = toGatewayError(e);
    status = error.status;
    if (status >= 500 && error.code === "INTERNAL") gateway.log.error("admin request failed", { requestId, error: String(error.cause ?? error) });
    if (!res.headersSent && !res.destroyed) {
      const h: Record<string, string> = { ...headers, "content-type": "application/json", ...error.headers };
      if (error.retryAfter !== undefined) h["retry-after"] = String(Math.max(0, Math.ceil(error.retryAfter)));
      // Answered without its body: what is still on its way is not read, so the connection cannot be reused.
      if (!bodyRead && !req.complete) h.connection = "close";
      res.writeHead(status, h);
      res.end(JSON.stringify(error.toJSON()));
    }
  } finally {
    gateway.inflight.leave(controller);
  }
  if (gateway.config.raw.log?.access !== false && gateway.log.enabled("info")) {
    gateway.log.info("request", {
      requestId, method: req.method, path: url.split("?")[0], endpoint: "admin", adminKeyId: admin?.id, status, errorCode: error?.code,
      durationMs: Math.round((performance.now() - startedAt) * 10) / 10,
    });
  }
}
