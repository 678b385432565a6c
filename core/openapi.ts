// GET /api/openapi.json: an OpenAPI 3.1 document built from the same JSON Schemas the validators come from.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { endpoints } from "./endpoints/index.ts";
import type { EndpointSpec } from "./endpoints/spec.ts";
import { packageRoot } from "./package-root.ts";
import { adminRoutes } from "./admin/routes.ts";
import { ADMIN_PREFIX } from "./admin/route.ts";
import { RouteMethods } from "./http/route-methods.ts";
import { servedById } from "./endpoints/gemini/route.ts";

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

const ERROR_STATUSES: Record<string, string> = {
  "400": "Invalid request (the message and details name the field)",
  "401": "Missing, malformed, unknown, revoked or expired API key",
  "402": "Project budget exhausted",
  "403": "Model not allowed for this project",
  "404": "Unknown model",
  "413": "Request body too large",
  "422": "Understood but not served: an idempotency key reused with another body, embeddings dimensions the model cannot give",
  "429": "Rate limited (see Retry-After)",
  "500": "Gateway fault",
  "502": "Upstream error after all fallbacks",
  "504": "Upstream timeout",
};

const ADMIN_ERRORS: Record<string, string> = {
  "400": "Invalid body or query parameter (the message and details name the field)",
  "401": "Missing, malformed, unknown, revoked or expired admin key (project keys are refused here)",
  "403": "FORBIDDEN: a read-scope admin key on a route that changes state",
  "404": "No such project, key or request",
  "409": "CONFLICT: the key id is taken, or the key is declared in gateway.yaml (changed in the file)",
  "413": "Request body too large",
  "503": "STORE_UNAVAILABLE: the state store cannot answer (changes and store-backed reads)",
};

/** The admin API (/admin/v1, outside /api): its own security scheme and server root. */
function addAdminPaths(paths: Record<string, Json>, errorRef: Json): void {
  for (const r of adminRoutes) {
    const path = (ADMIN_PREFIX + r.path).replace(/:(\w+)/g, "{$1}");
    const responses: Json = { [r.openapi.created ? "201" : "200"]: { description: "Success", content: { "application/json": { schema: r.openapi.responseSchema ? { $ref: `#/components/schemas/${r.openapi.responseSchema}` } : { type: "object" } } } } };
    for (const [code, description] of Object.entries(ADMIN_ERRORS)) responses[code] = { description, content: { "application/json": { schema: errorRef } } };
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
    for (const m of refusedMethods(route)) paths[path]![m] ??= notAllowedOp(path, params, m, routeMethods.for(route).join(", "), "Admin", errorRef);
  }
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** Every endpoint and admin route's methods, as core/app.ts registers them. */
const routeMethods = new RouteMethods();
for (const e of endpoints) routeMethods.add(e.method, e.route);
for (const r of adminRoutes) routeMethods.add(r.method, ADMIN_PREFIX + r.path);

/**
 * The methods the gateway answers 405 on an endpoint's path (core/app.ts): every method no route serves there. A
 * route's `:param` stands for any segment, and a wildcard route of that method takes the path (POST /v1beta/models
 * goes to the Gemini model routes, and is their 404).
 */
function refusedMethods(route: string): string[] {
  const served = new Set(routeMethods.for(route).map((m) => m.toLowerCase()));
  return METHODS.filter((m) => !served.has(m));
}

/** The Gemini routes answer errors in Google's shape (core/errors.ts toGeminiJSON), not the gateway's envelope. */
const GEMINI_ERROR: Json = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message", "status"],
      properties: { code: { type: "integer" }, message: { type: "string" }, status: { type: "string" }, details: { type: "array", items: { type: "object" } } },
    },
  },
};

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
        description: `Method not allowed (error code INVALID_REQUEST); Allow names the method to use`,
        headers: { Allow: { schema: { type: "string" }, description: "The method this path serves" } },
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

export function buildOpenApi(): Json {
  const schemas = toComponents(loadSchemas());
  const errorRef = { $ref: "#/components/schemas/ErrorEnvelope" };
  const paths: Record<string, Json> = {};
  for (const ep of endpoints) {
    const path = openApiPath(ep);
    const params = pathParams(ep);
    const ok: Json = { description: "Success", content: {} };
    if (ep.openapi.responseSchema) ok.content["application/json"] = { schema: { $ref: `#/components/schemas/${ep.openapi.responseSchema}` } };
    if (ep.openapi.streamSchema) {
      ok.content["text/event-stream"] = {
        schema: { type: "string", description: `Server-sent events; each data line is a ${ep.openapi.streamSchema}` },
      };
    }
    const responses: Json = { "200": ok };
    for (const [code, description] of Object.entries(ERROR_STATUSES)) {
      responses[code] = { description, content: { "application/json": { schema: errorRef } } };
    }
    const op: Json = {
      operationId: ep.openapi.operationId ?? `${ep.method.toLowerCase()}_${ep.kind}`,
      summary: ep.openapi.summary,
      tags: [ep.openapi.tag ?? "Gateway"],
      parameters: [
        ...params,
        ...(ep.openapi.query ?? []).map((q) => ({ ...q, in: "query", required: false })),
        { name: "X-Request-Id", in: "header", required: false, schema: { type: "string" }, description: "Echoed back, or generated when absent" },
        ...(ep.method === "POST"
          ? [
              { name: "Idempotency-Key", in: "header", required: false, schema: { type: "string" } },
              { name: "x-mg-idempotency-key", in: "header", required: false, schema: { type: "string" } },
            ]
          : []),
      ],
      responses,
      // Gemini clients send their key as x-goog-api-key (the SDKs) or ?key= (Google's REST examples); Anthropic
      // clients as x-api-key.
      ...(ep.protocol === "gemini" ? { security: [{ bearerAuth: [] }, { googApiKey: [] }, { googKeyQuery: [] }] }
        : ep.protocol === "anthropic" ? { security: [{ bearerAuth: [] }, { anthropicApiKey: [] }] }
        : {}),
    };
    if (ep.openapi.requestSchema) {
      op.requestBody = { required: true, content: { "application/json": { schema: { $ref: `#/components/schemas/${ep.openapi.requestSchema}` } } } };
    }
    (paths[path] ??= {})[ep.method.toLowerCase()] = op;
  }
  for (const ep of endpoints) {
    const path = openApiPath(ep);
    const served = routeMethods.for(ep.route).join(", ");
    const errorSchema = ep.protocol === "gemini" ? GEMINI_ERROR : errorRef;
    for (const m of refusedMethods(ep.route)) paths[path]![m] ??= notAllowedOp(path, pathParams(ep), m, served, ep.openapi.tag ?? "Gateway", errorSchema);
  }
  addGeminiIdPaths(paths);
  addAdminPaths(paths, errorRef);
  return {
    openapi: "3.1.0",
    info: {
      title: "Model Gateway API",
      version: "1.0.0",
      description: "One API in front of many hosted model providers. Error envelope: {error:{code,message,type?,details?}}.",
    },
    servers: [{ url: "/api", description: "{base_url}" }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "mg_live_… or mg_test_… (sandbox) keys" },
        googApiKey: { type: "apiKey", in: "header", name: "x-goog-api-key", description: "The Gemini API routes (/v1beta/) also take the key here" },
        googKeyQuery: { type: "apiKey", in: "query", name: "key", description: "…or in ?key= on the Gemini API routes" },
        anthropicApiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "The Anthropic-protocol routes (/v1/messages, /v1/messages/count_tokens) also take the key here" },
        adminKey: { type: "http", scheme: "bearer", description: "mg_admin_… keys from admin_keys in gateway.yaml (scope read or write); the admin API only" },
      },
    },
  };
}
