// One admin request, with the public API's HTTP hardening: the key is checked from the headers before any byte of
// the body is read (a client that sent Expect: 100-continue is told to send it only then; an answer given without
// reading the body closes the connection), the body is size-limited JSON validated against its schema, every error
// is the spec's envelope, a shutdown waits for it. Admin requests are not metered to any project's ledger, but each
// has its access-log line (endpoint "admin", the admin key's id, never the key). A path under /admin/v1 that no
// route takes gets the same key check first (refuseUnroutedAdmin).
import type { IncomingMessage, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import type { Gateway } from "../gateway.ts";
import { GatewayError, toGatewayError } from "../errors.ts";
import { readJsonBody } from "../http/body.ts";
import { requestIdOf } from "../http/handle.ts";
import { validationError } from "../http/validate.ts";
import { RequestAbort } from "../net/request-abort.ts";
import { recordUnrouted } from "../http/unrouted.ts";
import { accessLogOn } from "../observability/access-log-on.ts";
import { authenticateAdmin, requireScope } from "./auth.ts";
import type { AdminAnswer, AdminRoute } from "./route.ts";
import type { AdminKeyRuntime } from "../config/runtime.ts";

function hasBody(req: IncomingMessage): boolean {
  const len = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (len !== undefined && len !== "0");
}

/** What a request does once its key passed; `bodyRead` is called once its body has been read whole. */
type AdminWork = (admin: AdminKeyRuntime, bodyRead: () => void) => Promise<AdminAnswer>;

/** How the request is recorded once answered: the admin access line, or a path no route takes (core/http/unrouted.ts). */
type Recorder = (status: number, error: GatewayError | undefined, admin: AdminKeyRuntime | undefined) => void;

async function serveAdmin(gateway: Gateway, req: IncomingMessage, res: ServerResponse, requestId: string, bodyless: boolean, work: AdminWork, record: Recorder): Promise<void> {
  const controller = new RequestAbort();
  gateway.inflight.enter(controller);
  let admin: AdminKeyRuntime | undefined;
  let bodyRead = bodyless;
  let status = 500;
  let error: GatewayError | undefined;
  const headers: Record<string, string> = { "x-request-id": requestId, "cache-control": "no-store" };
  try {
    admin = authenticateAdmin(gateway.config, req.headers);
    const answer = await work(admin, () => { bodyRead = true; });
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
  record(status, error, admin);
}

export function handleAdmin(gateway: Gateway, route: AdminRoute, req: IncomingMessage, res: ServerResponse, params: Record<string, string>): Promise<void> {
  const startedAt = performance.now();
  const requestId = requestIdOf(req);
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const work: AdminWork = async (admin, bodyRead) => {
    requireScope(admin, route.scope);
    let body: unknown;
    if (route.method !== "GET") {
      if (route.bodyOptional && !hasBody(req)) {
        body = {};
        bodyRead();
      } else {
        if (req.headers.expect?.toLowerCase() === "100-continue") {
          res.removeHeader("connection");
          res.writeContinue();
        }
        body = await readJsonBody(req, gateway.config.server.maxBodyBytes, "INVALID_REQUEST");
        bodyRead();
      }
      if (route.validate && !route.validate(body)) throw validationError(route.validate, "INVALID_REQUEST");
    }
    return route.handle({ gateway, admin, params, query: new URLSearchParams(q === -1 ? "" : url.slice(q + 1)), body, requestId });
  };
  // A GET route takes no body: nothing is left unread.
  return serveAdmin(gateway, req, res, requestId, route.method === "GET", work, (status, error, admin) => {
    if (!accessLogOn(gateway)) return;
    gateway.log.info("request", {
      requestId, method: req.method, path: url.split("?")[0], endpoint: "admin", adminKeyId: admin?.id, status, errorCode: error?.code,
      durationMs: Math.round((performance.now() - startedAt) * 10) / 10,
    });
  });
}

/**
 * A path under /admin/v1 no route takes (`refusal`: its 404, a 405 with Allow, a 400 for a path that is not valid
 * percent-encoding). Without a valid admin key it is the same 401 as any admin route, before any byte of its body is
 * read, so the answers do not tell a caller without one which routes exist; with one, `refusal`, its body unread.
 * Either way with no-store, counted and logged as a request no route takes.
 */
export function refuseUnroutedAdmin(gateway: Gateway, req: IncomingMessage, res: ServerResponse, refusal: GatewayError): Promise<void> {
  const requestId = requestIdOf(req);
  return serveAdmin(gateway, req, res, requestId, false, async () => {
    throw refusal;
  }, (status, error, admin) => recordUnrouted(gateway, req, res, requestId, status, error?.code, admin?.id));
}
