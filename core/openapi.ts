// GET /api/openapi.json: an OpenAPI 3.1 document built from the same JSON Schemas the validators come from.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { endpoints } from "./endpoints/index.ts";
import { packageRoot } from "./package-root.ts";

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
  "429": "Rate limited (see Retry-After)",
  "500": "Gateway fault",
  "502": "Upstream error after all fallbacks",
  "504": "Upstream timeout",
};

export function buildOpenApi(): Json {
  const schemas = toComponents(loadSchemas());
  const errorRef = { $ref: "#/components/schemas/ErrorEnvelope" };
  const paths: Record<string, Json> = {};
  for (const ep of endpoints) {
    // A `**` route names a Gemini model (`{creator}/{slug}`, the slash raw or %2F-encoded); an action follows a colon.
    const path = ep.route.replace(/^\/api/, "").replace(/:(\w+)/g, "{$1}").replace("/**", "/{model}") + (ep.action ? `:${ep.action}` : "");
    const params: Json[] = [...ep.route.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
    if (ep.route.endsWith("/**")) params.push({ name: "model", in: "path", required: true, schema: { type: "string" }, description: "A gateway model id (its slash raw or %2F-encoded), or a slug only one creator has" });
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
      // Gemini clients send their key as x-goog-api-key (the SDKs) or ?key= (Google's REST examples).
      ...(ep.protocol === "gemini" ? { security: [{ bearerAuth: [] }, { googApiKey: [] }, { googKeyQuery: [] }] } : {}),
    };
    if (ep.openapi.requestSchema) {
      op.requestBody = { required: true, content: { "application/json": { schema: { $ref: `#/components/schemas/${ep.openapi.requestSchema}` } } } };
    }
    (paths[path] ??= {})[ep.method.toLowerCase()] = op;
  }
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
      },
    },
  };
}
