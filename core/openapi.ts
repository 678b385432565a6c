// GET /api/openapi.json: an OpenAPI 3.1 document built from the same JSON Schemas the validators come from.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { endpoints } from "./endpoints/index.ts";
import { endpointMethods, type EndpointSpec } from "./endpoints/spec.ts";
import { packageRoot } from "./package-root.ts";
import { adminRoutes } from "./admin/routes.ts";
import { ADMIN_PREFIX } from "./admin/route.ts";
import { RouteMethods, withHead } from "./http/route-methods.ts";
import { servedById } from "./endpoints/gemini/route.ts";
import type { EndpointKind } from "./pipeline/context.ts";
import { adminErrors, catalogErrors, errorComponents, gatewayErrors, geminiErrors, goneError, mcpErrors, messagesErrors } from "./openapi-errors.ts";
import { assetOperation } from "./openapi-assets.ts";
import { ASSET_ROUTE } from "./assets/index.ts";
import {
  anthropicRequestIdHeader, billedHeaders, catalogRequestIdHeader, HEADERS, IDEMPOTENCY_HEADERS, namedHeaders, rateLimitHeaders, REQUEST_HEADERS, requestIdHeader, servedHeaders,
} from "./openapi-headers.ts";

const SCHEMAS = join(packageRoot(), "schemas");
const DIRS = ["api", "responses"];

type Json = any;

/** Schema files keyed by $id, with the component name each one becomes (its title). */
function loadSchemas(): Map<string, Json> {
  const byId = new Map<string, Json>();
  for (const d of DIRS) {
    for (const f of readdirSync(join(SCHEMAS, d)).sort()) {
      if (!f.endsWith(".schema.json")) continue;
      const s = JSON.parse(readFileSync(join(SCHEMAS, d, f), "utf8"));
      byId.set(s.$id ?? f, s);
    }
  }
  return byId;
}

/** Hoist `definitions` into components and rewrite $refs; drop ajv-only keywords. */
function toComponents(byId: Map<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = {};
  const titleOf = (id: string) => byId.get(id)?.title ?? id;
  for (const [, schema] of byId) {
    const title: string = schema.title;
    const rewrite = (node: Json): Json => {
      if (Array.isArray(node)) return node.map(rewrite);
      if (!node || typeof node !== "object") return node;
      const copy: Json = {};
      for (const [k, v] of Object.entries(node)) {
        if (k === "$schema" || k === "$id" || k === "definitions" || k === "discriminator") continue;
        if (k === "$ref" && typeof v === "string") {
          // "#/definitions/X" (this file), "other.schema.json" (a file), "other.schema.json#/definitions/X" (a file's definition).
          const [file, pointer] = v.split("#");
          const owner = file ? titleOf(file) : title;
          copy.$ref = pointer?.startsWith("/definitions/")
            ? `#/components/schemas/${owner}_${pointer.slice("/definitions/".length)}`
            : `#/components/schemas/${owner}`;
          continue;
        }
        copy[k] = rewrite(v);
      }
      return copy;
    };
    out[title] = rewrite(schema);
    for (const [name, def] of Object.entries(schema.definitions ?? {})) out[`${title}_${name}`] = rewrite(def);
  }
  return out;
}

/** The admin API (/admin/v1, outside /api): its own security scheme and server root. */
function addAdminPaths(paths: Record<string, Json>, errorRef: Json): void {
  for (const r of adminRoutes) {
    const path = (ADMIN_PREFIX + r.path).replace(/:(\w+)/g, "{$1}");
    const ok = { description: "Success", headers: requestIdHeader(), content: { "application/json": { schema: r.openapi.responseSchema ? { $ref: `#/components/schemas/${r.openapi.responseSchema}` } : { type: "object" } } } };
    const responses: Json = { [r.openapi.created ? "201" : "200"]: ok, ...adminErrors() };
    const op: Json = {
      operationId: r.openapi.operationId,
      summary: r.openapi.summary,
      description: `Admin API; needs a ${r.scope}-scope admin key${r.scope === "read" ? " (or a write-scope one)" : ""}. See docs/admin-api.md.`,
      tags: ["Admin"],
      parameters: [
        ...[...r.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } })),
        ...(r.openapi.query ?? []).map((q) => ({ name: q.name, in: "query", required: false, description: q.description, schema: q.schema ?? { type: "string" } })),
        { name: "X-Request-Id", in: "header", required: false, schema: { type: "string" }, description: "Echoed back, or generated when absent" },
      ],
      responses,
      security: [{ adminKey: [] }],
    };
    if (r.openapi.requestSchema) op.requestBody = { required: !r.bodyOptional, content: { "application/json": { schema: { $ref: `#/components/schemas/${r.openapi.requestSchema}` } } } };
    const item = (paths[path] ??= { servers: [{ url: "/", description: "The gateway's root: the admin API is not under /api" }] });
    item[r.method.toLowerCase()] = op;
  }
  for (const r of adminRoutes) {
    const route = ADMIN_PREFIX + r.path;
    const path = route.replace(/:(\w+)/g, "{$1}");
    const params = [...r.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
    // A wrong method is told apart only with a valid admin key: without one it is the admin API's 401 (core/app.ts).
    const { "401": refused } = adminErrors() as Record<string, Json>;
    for (const m of refusedMethods(route)) {
      const op = notAllowedOp(path, params, m, routeMethods.for(route).join(", "), "Admin", errorRef);
      paths[path]![m] ??= { ...op, security: [{ adminKey: [] }], responses: { ...op.responses, "401": refused } };
    }
  }
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** Every endpoint and admin route's methods, as core/app.ts registers them (HEAD beside GET: withHead). */
const routeMethods = new RouteMethods();
for (const e of endpoints) for (const m of endpointMethods(e)) routeMethods.add(m, e.route);
for (const r of adminRoutes) for (const m of withHead(r.method)) routeMethods.add(m, ADMIN_PREFIX + r.path);

/**
 * The methods the gateway answers 405 on an endpoint's path (core/app.ts): every method no route serves there. A
 * route's `:param` stands for any segment, and a wildcard route of that method takes the path (POST /v1beta/models
 * goes to the Gemini model routes, and is their 404).
 */
function refusedMethods(route: string): string[] {
  const served = new Set(routeMethods.for(route).map((m) => m.toLowerCase()));
  return METHODS.filter((m) => !served.has(m));
}

/** What a client gets for a method the path does not serve, documented so clients and validators expect it. */
function notAllowedOp(path: string, params: Json[], method: string, served: string, tag: string, errorSchema: Json): Json {
  return {
    operationId: `${method}_${path.replace(/[^A-Za-z0-9]+/g, "_").replace(/^_|_$/g, "")}_not_allowed`,
    summary: `Not served: ${path} takes ${served}`,
    tags: [tag],
    security: [],
    ...(params.length ? { parameters: params } : {}),
    responses: {
      "405": {
        description: `Method not allowed (error code INVALID_REQUEST); Allow names the methods to use`,
        headers: { Allow: { schema: { type: "string" }, description: "The methods this path serves" }, ...requestIdHeader() },
        content: { "application/json": { schema: errorSchema } },
      },
    },
  };
}

/** An endpoint's path in the document: `{param}` for `:param`; a `**` route names a Gemini model, an action follows a colon. */
const openApiPath = (ep: EndpointSpec): string =>
  ep.route.replace(/^\/api/, "").replace(/:(\w+)/g, "{$1}").replace("/**", "/{model}") + (ep.action ? `:${ep.action}` : "");

function pathParams(ep: EndpointSpec): Json[] {
  const params: Json[] = [...ep.route.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
  if (ep.route.endsWith("/**")) params.push({ name: "model", in: "path", required: true, schema: { type: "string" }, description: "A gateway model id (its slash raw or %2F-encoded), or a slug only one creator has" });
  return params;
}

/**
 * The Gemini custom methods where the model id is the path (core/endpoints/gemini/route.ts GEMINI_ID_ROUTE): the
 * same operations, for catalog models only; another method there is a 404, so no 405 is documented.
 */
function addGeminiIdPaths(paths: Record<string, Json>): void {
  const segment = (name: string, description: string): Json => ({ name, in: "path", required: true, schema: { type: "string" }, description });
  for (const ep of endpoints) {
    if (!ep.action || !servedById(ep.route)) continue;
    const method = ep.method.toLowerCase();
    const op = paths[openApiPath(ep)]![method];
    paths[`/v1beta/{creator}/{slug}:${ep.action}`] = {
      [method]: {
        ...op,
        operationId: `${op.operationId}_by_model_id`,
        summary: `${op.summary}. The model id as the path, without models/ (what @ai-sdk/google and @google/generative-ai send); only catalog models`,
        parameters: [
          segment("creator", "The gateway model id's creator (openai in openai/gpt-4o)"),
          segment("slug", "The rest of the model id"),
          ...op.parameters.filter((p: Json) => !(p.in === "path" && p.name === "model")),
        ],
      },
    };
  }
}

/** Endpoints whose answers a provider makes (or a cache hit or replay stands in for): who served it, what it cost. */
const BILLED: ReadonlySet<EndpointKind> = new Set(["chat", "messages", "responses", "gemini", "embeddings", "rerank", "images", "videos"]);

/** The success answer: its body (JSON, events) and headers. */
function successResponse(ep: EndpointSpec): Json {
  const o = ep.openapi;
  const content: Json = {};
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  if (o.responseSchema) {
    content["application/json"] = {
      schema: o.anthropicResponseSchema
        ? { anyOf: [ref(o.responseSchema), ref(o.anthropicResponseSchema)], description: `A ${o.anthropicResponseSchema} when the request has anthropic-version, else a ${o.responseSchema}` }
        : ref(o.responseSchema),
    };
  }
  if (o.streamSchema) {
    // OpenAPI 3.1 has no schema for an event stream's items: the description names the component each event's data is.
    const events = o.namedEvents
      ? `Server-sent events: an event: <type> line, then a data line that is a ${o.streamSchema} of that type`
      : `Server-sent events; each data line is a ${o.streamSchema}`;
    content["text/event-stream"] = { schema: { type: "string", description: events } };
  }
  const headers: Json = { ...requestIdHeader(), ...(ep.protocol === "anthropic" ? anthropicRequestIdHeader() : {}), ...(o.anthropicResponseSchema ? catalogRequestIdHeader() : {}), ...(ep.kind === "mcp" ? {} : rateLimitHeaders()) };
  if (BILLED.has(ep.kind) || ep.kind === "count_tokens") Object.assign(headers, servedHeaders());
  if (BILLED.has(ep.kind)) Object.assign(headers, billedHeaders());
  Object.assign(headers, namedHeaders(o.responseHeaders ?? []));
  return { description: "Success", headers, ...(Object.keys(content).length ? { content } : {}) };
}

/** POSTs the idempotency keys apply to (plugins/idempotency; video jobs attach by key themselves): they may meet a 409. */
const idempotent = (ep: EndpointSpec): boolean => ep.method === "POST" && ep.kind !== "videos";

function errorResponses(ep: EndpointSpec): Json {
  if (ep.kind === "mcp") return mcpErrors(ep.method);
  if (ep.protocol === "gemini") return geminiErrors(idempotent(ep));
  if (ep.kind === "models") return catalogErrors(idempotent(ep)); // core/http/respond.ts anthropicCatalog
  if (ep.kind === "images") return { ...gatewayErrors(idempotent(ep)), ...goneError() };
  return ep.protocol === "anthropic" ? messagesErrors(idempotent(ep)) : gatewayErrors(idempotent(ep));
}

/** The catalog (kind models on the OpenAI-protocol routes) takes x-api-key too: Anthropic clients read it. */
const takesAnthropicKey = (ep: EndpointSpec): boolean => ep.protocol === "anthropic" || (ep.kind === "models" && ep.protocol === "openai");

function operation(ep: EndpointSpec): Json {
  const o = ep.openapi;
  const responses: Json = o.notServed ? {} : { "200": successResponse(ep) };
  if (o.accepted) responses["202"] = { description: o.accepted, headers: requestIdHeader() };
  Object.assign(responses, errorResponses(ep));
  const op: Json = {
    operationId: o.operationId ?? `${ep.method.toLowerCase()}_${ep.kind}`,
    summary: o.summary,
    tags: [o.tag ?? "Gateway"],
    parameters: [
      ...pathParams(ep),
      ...(o.query ?? []).map(({ required, ...q }) => ({ ...q, in: "query", required: required ?? false })),
      { name: "X-Request-Id", in: "header", required: false, schema: { type: "string" }, description: "Echoed back, or generated when absent" },
      ...(ep.method === "POST" ? IDEMPOTENCY_HEADERS : []),
      ...(o.headers ?? []).map((name) => REQUEST_HEADERS[name]),
    ],
    responses,
    // Gemini clients send their key as x-goog-api-key (the SDKs) or ?key= (Google's REST examples); Anthropic
    // clients (on the Messages routes and the catalog) as x-api-key.
    ...(ep.protocol === "gemini" ? { security: [{ bearerAuth: [] }, { googApiKey: [] }, { googKeyQuery: [] }] }
      : takesAnthropicKey(ep) ? { security: [{ bearerAuth: [] }, { anthropicApiKey: [] }] }
      : {}),
  };
  if (o.requestSchema) {
    op.requestBody = { required: true, content: { "application/json": { schema: { $ref: `#/components/schemas/${o.requestSchema}` } } } };
  }
  return op;
}

/** GET /api/openapi.json (core/app.ts): this document, served without a key. */
const OPENAPI_ROUTE = "/api/openapi.json";
for (const m of withHead("GET")) routeMethods.add(m, OPENAPI_ROUTE);
/** GET /api/v1/assets/:name (core/app.ts): signed links to generated images and videos, served without a key. */
const ASSET_NAME_ROUTE = `${ASSET_ROUTE}/:name`;
for (const m of withHead("GET")) routeMethods.add(m, ASSET_NAME_ROUTE);
const openApiOperation: Json = {
  operationId: "get_openapi",
  summary: "This OpenAPI 3.1 document",
  tags: ["Gateway"],
  security: [],
  responses: {
    "200": { description: "The document", headers: requestIdHeader(), content: { "application/json": { schema: { type: "object", additionalProperties: true } } } },
    "503": gatewayErrors()["503"],
  },
};

export function buildOpenApi(): Json {
  const schemas = toComponents(loadSchemas());
  const errorRef = { $ref: "#/components/schemas/ErrorEnvelope" };
  const paths: Record<string, Json> = { "/openapi.json": { get: openApiOperation } };
  for (const m of refusedMethods(OPENAPI_ROUTE)) paths["/openapi.json"]![m] = notAllowedOp("/openapi.json", [], m, routeMethods.for(OPENAPI_ROUTE).join(", "), "Gateway", errorRef);
  const assetPath = "/v1/assets/{name}";
  const asset = assetOperation();
  paths[assetPath] = { get: asset };
  const assetParams = asset.parameters.filter((p: Json) => p.in === "path");
  for (const m of refusedMethods(ASSET_NAME_ROUTE)) paths[assetPath]![m] = notAllowedOp(assetPath, assetParams, m, routeMethods.for(ASSET_NAME_ROUTE).join(", "), "Inference", errorRef);
  for (const ep of endpoints) (paths[openApiPath(ep)] ??= {})[ep.method.toLowerCase()] = operation(ep);
  for (const ep of endpoints) {
    const path = openApiPath(ep);
    const served = routeMethods.for(ep.route).join(", ");
    const errorSchema = ep.protocol === "gemini" ? { $ref: "#/components/schemas/GeminiErrorEnvelope" } : errorRef;
    for (const m of refusedMethods(ep.route)) paths[path]![m] ??= notAllowedOp(path, pathParams(ep), m, served, ep.openapi.tag ?? "Gateway", errorSchema);
  }
  addGeminiIdPaths(paths);
  addAdminPaths(paths, errorRef);
  return {
    openapi: "3.1.0",
    info: {
      title: "Model Gateway API",
      version: "1.0.0",
      description: "One API in front of many hosted model providers. Error envelope: {error:{code,message,type?,details?}}; the Gemini routes (/v1beta/) answer errors in Google's shape, the MCP routes as JSON-RPC errors once the key is accepted.",
    },
    servers: [{ url: "/api", description: "{base_url}" }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas,
      responses: errorComponents(),
      headers: HEADERS,
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "mg_live_… or mg_test_… (sandbox) keys" },
        googApiKey: { type: "apiKey", in: "header", name: "x-goog-api-key", description: "The Gemini API routes (/v1beta/) also take the key here" },
        googKeyQuery: { type: "apiKey", in: "query", name: "key", description: "…or in ?key= on the Gemini API routes" },
        anthropicApiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "The Anthropic-protocol routes (/v1/messages, /v1/messages/count_tokens) and the catalog (/v1/models…) also take the key here" },
        adminKey: { type: "http", scheme: "bearer", description: "mg_admin_… keys from admin_keys in gateway.yaml (scope read or write); the admin API only" },
      },
    },
  };
}
