// The h3 app: public routes under /api, /metrics outside it (when enabled on this port), the error envelope for
// everything else.
// Handlers write to the Node response directly (see DESIGN §8) and tell h3 the response is handled.
import { H3, getRouterParams, type H3Event } from "h3";
import { toNodeHandler } from "h3/node";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Gateway } from "./gateway.ts";
import { endpoints } from "./endpoints/index.ts";
import { endpointMethods, type EndpointSpec } from "./endpoints/spec.ts";
import { handleRequest, requestIdOf } from "./http/handle.ts";
import { writeWhole } from "./http/respond.ts";
import { GatewayError, toGatewayError, toGeminiJSON } from "./errors.ts";
import { actionRoutes, GEMINI_ID_ROUTE, idRouteRest, isGeminiPath, servedById } from "./endpoints/gemini/route.ts";
import { buildOpenApi } from "./openapi.ts";
import { serveAsset } from "./assets/serve.ts";
import { ASSET_ROUTE } from "./assets/index.ts";
import { serveMetrics } from "./observability/metrics-http.ts";
import { readiness } from "./readiness.ts";
import { adminRoutes } from "./admin/routes.ts";
import { ADMIN_PREFIX, isAdminPath } from "./admin/route.ts";
import { handleAdmin, refuseUnroutedAdmin } from "./admin/handle.ts";
import { serveConsole } from "./console/serve.ts";
import { consoleSettings } from "./console/settings.ts";
import { trafficOf } from "./admin/traffic-sampler.ts";
import { answerUnrouted } from "./http/unrouted.ts";
import { envelopeForPath } from "./http/path-envelope.ts";
import { markWhenEnded } from "./observability/wire-bytes.ts";
import { RouteMethods, withHead } from "./http/route-methods.ts";
import { crossOrigin } from "./http/cors.ts";

const HANDLED = Symbol.for("h3.handled");

function nodeOf(event: H3Event): { req: IncomingMessage; res: ServerResponse } {
  const node = event.runtime?.node;
  if (!node?.res) throw new Error("model-gateway serves on Node.js only");
  return { req: node.req as IncomingMessage, res: node.res as ServerResponse };
}

/** A request no route takes, answered, counted and logged (core/http/unrouted.ts). */
function unrouted(gateway: Gateway, req: IncomingMessage, res: ServerResponse, err: GatewayError, body: unknown, anthropic = false): symbol {
  answerUnrouted(gateway, req, res, err, body, anthropic);
  return HANDLED;
}

/** A JSON answer with its length, in one write (writeWhole), as the endpoints answer; to HEAD, the same head alone. */
function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): symbol {
  const text = JSON.stringify(body);
  if (res.req?.method === "HEAD") {
    res.writeHead(status, { "content-type": "application/json", ...headers, "content-length": String(Buffer.byteLength(text)) });
    res.end();
    return HANDLED;
  }
  writeWhole(res, status, { "content-type": "application/json", ...headers }, text);
  return HANDLED;
}

/**
 * `api`, when given, is filled with the API's routes (under /api/, the Gemini model-id paths too): the methods a
 * browser's preflight is told (core/http/cors.ts).
 */
export function createApp(gateway: Gateway, api?: RouteMethods): H3 {
  const app = new H3();
  // Every route as registered, so a known path asked with another method is a 405 listing the methods it takes.
  const served = new RouteMethods();
  /** `methods`: a GET route's are GET and HEAD (withHead), the GET's answer without its body for HEAD. */
  const on = (methods: string | string[], route: string, handler: (event: H3Event) => unknown) => {
    for (const method of typeof methods === "string" ? withHead(methods) : methods) {
      served.add(method, route);
      if (route.startsWith("/api/")) api?.add(method, route);
      app.on(method as "GET", route, handler);
    }
  };
  const register = (spec: EndpointSpec) => {
    on(endpointMethods(spec), spec.route, async (event) => {
      const { req, res } = nodeOf(event);
      await handleRequest(gateway, spec, req, res, (getRouterParams(event, { decode: true }) ?? {}) as Record<string, string>);
      return HANDLED;
    });
  };
  /** A path no route serves (or a method it is not served with), after the console has had its look. */
  const noRoute = async (event: H3Event) => {
    const { req, res } = nodeOf(event);
    if (await serveConsole(gateway, req, res, event.url.pathname)) return HANDLED;
    // Every method the path serves (/mcp takes POST, GET and DELETE; /responses/{id} GET and DELETE), as Allow must list them.
    const methods = served.for(event.url.pathname);
    const err = methods.length
      ? new GatewayError(405, "INVALID_REQUEST", `Method ${req.method} is not allowed on ${event.url.pathname} (use ${methods.join(" or ")})`, { headers: { allow: methods.join(", ") } })
      : new GatewayError(404, "NOT_FOUND", `No route for ${req.method} ${event.url.pathname}`);
    const path = event.url.pathname;
    // The admin API's: its key is checked first, so without one no answer tells which admin routes exist.
    if (isAdminPath(path)) {
      await refuseUnroutedAdmin(gateway, req, res, err);
      return HANDLED;
    }
    // In the envelope of the API the path belongs to: the client's SDK reads its own markers (Anthropic's error.type).
    const envelope = envelopeForPath(path, err);
    return unrouted(gateway, req, res, err, envelope.body, envelope.anthropic);
  };
  for (const spec of endpoints) if (!spec.action) register(spec);
  // Custom methods (Gemini's `models/{model}:generateContent`): one handler per wildcard route picks the endpoint.
  for (const group of actionRoutes(endpoints)) {
    const serve = async (event: H3Event, rest: string) => {
      const { req, res } = nodeOf(event);
      const picked = group.pick(rest);
      if ("error" in picked) return unrouted(gateway, req, res, picked.error, toGeminiJSON(picked.error));
      await handleRequest(gateway, picked.spec, req, res, picked.params);
      return HANDLED;
    };
    on(group.method, group.route, (event) => serve(event, String(getRouterParams(event)?._ ?? "")));
    // The model id as the path (`/v1beta/openai/gpt-4o:generateContent`, route.ts): only a catalog model's, and not
    // in `served`, so every other path there is answered as before.
    if (servedById(group.route)) {
      api?.add(group.method, GEMINI_ID_ROUTE);
      app.on(group.method as "POST", GEMINI_ID_ROUTE, (event) => {
        const rest = idRouteRest(getRouterParams(event));
        // Not `{id}:{a method of this route}` (`files/abc:download`): the plain 404 of a path no route serves.
        return rest === undefined || "error" in group.pick(rest) ? noRoute(event) : serve(event, rest);
      });
    }
  }

  // The admin API (admin keys only; core/admin/). With the console on, its live traffic is sampled from the start,
  // so the overview has the last hour when it is first opened (one read of the metrics every 10 s, off the request path).
  if (consoleSettings(gateway.config.raw).enabled !== false) trafficOf(gateway);
  for (const route of adminRoutes) {
    on(route.method, ADMIN_PREFIX + route.path, async (event) => {
      const { req, res } = nodeOf(event);
      await handleAdmin(gateway, route, req, res, (getRouterParams(event, { decode: true }) ?? {}) as Record<string, string>);
      return HANDLED;
    });
  }

  // Only with metrics.api_port (and so a token): by default metrics have a listener of their own.
  on("GET", "/metrics", async (event) => {
    const { req, res } = nodeOf(event);
    if (!gateway.config.metrics.apiPort) {
      const err = new GatewayError(404, "NOT_FOUND", "No route for GET /metrics on the API port (metrics are served on metrics.host:metrics.port)");
      return unrouted(gateway, req, res, err, err.toJSON());
    }
    await serveMetrics(gateway, req, res);
    return HANDLED;
  });

  let openapi: string | undefined;
  on("GET", "/api/openapi.json", (event) => {
    openapi ??= JSON.stringify(buildOpenApi());
    const { req, res } = nodeOf(event);
    res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(openapi)), "x-request-id": requestIdOf(req) });
    res.end(openapi);
    return HANDLED;
  });

  // Signed asset links (generated images/videos): the signature is the credential, so no auth pipeline.
  on("GET", `${ASSET_ROUTE}/:name`, async (event) => {
    const { req, res } = nodeOf(event);
    await serveAsset(gateway, req, res, getRouterParams(event, { decode: true })?.name ?? "", requestIdOf(req));
    return HANDLED;
  });

  // Liveness: the process serves HTTP. Readiness (should traffic come here?) is /readyz (core/readiness.ts).
  // Probes are neither counted nor logged (one every few seconds per prober), but carry x-request-id like every answer.
  // HEAD as well as GET, as on every GET route (on): some load balancers probe with HEAD, and read the status alone.
  on("GET", "/healthz", (event) => {
    const { req, res } = nodeOf(event);
    return sendJson(res, 200, { status: "ok" }, { "x-request-id": requestIdOf(req) });
  });
  on("GET", "/readyz", async (event) => {
    const { req, res } = nodeOf(event);
    const r = await readiness(gateway);
    return sendJson(res, r.ready ? 200 : 503, r.body, { "x-request-id": requestIdOf(req), "cache-control": "no-store", ...(r.ready ? {} : { "retry-after": "1" }) });
  });

  // The operator console (core/console/), before the 404 of any other path: off the path of every API request.
  app.all("/**", noRoute);
  return app;
}

/**
 * Static endpoint routes (POST /api/v1/chat/completions, ...) skip h3: its per-request Request/Response wrappers
 * and the extra res.end() it issues after a handled response cost ~10% of the gateway's CPU under load.
 * The same handleRequest runs either way; anything else (params, 404/405, metrics, odd paths) goes through h3.
 */
function decodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

export function createNodeHandler(gateway: Gateway) {
  const api = new RouteMethods();
  const viaH3 = toNodeHandler(createApp(gateway, api));
  const direct = new Map<string, EndpointSpec>();
  for (const spec of endpoints) if (!/[:*]/.test(spec.route)) for (const m of endpointMethods(spec)) direct.set(`${m} ${spec.route}`, spec);
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    // Browsers' calls from other origins (server.cors, reloadable): unset, this one test is all it costs.
    const cors = gateway.config.server.cors;
    if (cors !== undefined) {
      const step = crossOrigin(cors, req, res, path, api);
      if (step === "answered") return markWhenEnded(req, res);
      if (step) return answerUnrouted(gateway, req, res, step, isGeminiPath(path) ? toGeminiJSON(step) : step.toJSON());
    }
    const spec = direct.get(`${req.method} ${path}`);
    if (!spec) {
      // h3 answers a path it cannot percent-decode with its own bare 400 body: the gateway's envelope instead.
      if (path.includes("%") && !decodable(path)) {
        const err = new GatewayError(400, "INVALID_REQUEST", `The request path is not valid percent-encoding: ${JSON.stringify(path.slice(0, 200))}`);
        if (isAdminPath(path)) return void refuseUnroutedAdmin(gateway, req, res, err);
        return answerUnrouted(gateway, req, res, err, isGeminiPath(path) ? toGeminiJSON(err) : err.toJSON());
      }
      // Whatever h3 answers (a probe, the OpenAPI document, a console page) may not be logged: its bytes are taken as
      // it ends all the same, so the next logged request on the connection is charged only its own.
      markWhenEnded(req, res);
      return viaH3(req, res);
    }
    return handleRequest(gateway, spec, req, res, {}).catch((err) => {
      gateway.log.error("request failed", { error: String(err) });
      if (res.headersSent) return void res.destroy();
      sendJson(res, 500, toGatewayError(err).toJSON(), { "x-request-id": requestIdOf(req) });
    });
  };
}
