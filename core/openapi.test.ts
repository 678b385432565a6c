// The OpenAPI document as a client generator reads it (openapi-typescript, orval): what each operation may send and
// answer, and schemas a typed client can write spec-valid requests with. The answers themselves are held to it in
// test/openapi-contract.e2e.test.ts.
import { describe, expect, it } from "vitest";
import { buildOpenApi } from "./openapi.ts";

const doc = buildOpenApi();
const METHODS = ["get", "post", "put", "patch", "delete"];

const deref = (node: any): any => (node?.$ref ? node.$ref.slice(2).split("/").reduce((n: any, k: string) => n[k], doc) : node);

function* operations(): Generator<[string, string, any]> {
  for (const [path, item] of Object.entries<any>(doc.paths)) for (const m of METHODS) if (item[m]) yield [path, m, item[m]];
}

/** Every schema node under components.schemas, with where it is. */
function* schemaNodes(node: any = doc.components.schemas, at = "#/components/schemas"): Generator<[string, any]> {
  if (Array.isArray(node)) return yield* node.flatMap((n, i) => [...schemaNodes(n, `${at}/${i}`)]);
  if (!node || typeof node !== "object") return;
  yield [at, node];
  for (const [k, v] of Object.entries(node)) yield* schemaNodes(v, `${at}/${k}`);
}

const isObject = (s: any) => s.type === "object" || (Array.isArray(s.type) && s.type.includes("object"));

describe("/api/openapi.json for client generators", () => {
  it("an object schema that names no properties (a JSON Schema, tool arguments, error details) is declared open, not read as an empty object", () => {
    const closed = [...schemaNodes()]
      .filter(([, s]) => isObject(s) && !s.properties && s.additionalProperties === undefined && !s.patternProperties && !s.anyOf && !s.oneOf && !s.allOf && !s.$ref)
      .map(([at]) => at);
    expect(closed).toEqual([]);
  });

  it("a property beside an index signature fits it: providerOptions.gateway {order, models} is a valid providerOptions value in TypeScript too", () => {
    const clashes: string[] = [];
    for (const [at, s] of schemaNodes()) {
      const bag = s.additionalProperties;
      if (!s.properties || !bag || typeof bag !== "object" || bag.additionalProperties === true) continue;
      for (const [name, p] of Object.entries<any>(s.properties)) {
        const own = Object.keys(deref(p)?.properties ?? {}).filter((k) => !(k in (bag.properties ?? {})));
        if (own.length) clashes.push(`${at}.${name}: ${own.join(", ")}`);
      }
    }
    expect(clashes).toEqual([]);
  });

  it("every answer of every operation names the X-Request-Id it carries", () => {
    const missing: string[] = [];
    for (const [path, m, op] of operations()) {
      for (const [code, r] of Object.entries<any>(op.responses)) if (!deref(r).headers?.["X-Request-Id"]) missing.push(`${m.toUpperCase()} ${path} ${code}`);
    }
    expect(missing).toEqual([]);
    expect(deref(doc.components.headers["X-Request-Id"]).required).toBe(true);
  });

  it("a 503 (guardrail or store unavailable, shutting down) is documented with Retry-After on every operation of the API and the admin API", () => {
    const without: string[] = [];
    for (const [path, m, op] of operations()) {
      if (op.responses["405"]) continue;
      const r = deref(op.responses["503"]);
      if (!r?.headers?.["Retry-After"]) without.push(`${m.toUpperCase()} ${path}`);
    }
    expect(without).toEqual([]);
  });

  it("a query parameter is required where the gateway requires it (?alt=sse), optional elsewhere", () => {
    const required = [...operations()].flatMap(([path, m, op]) => (op.parameters ?? []).filter((p: any) => p.in === "query" && p.required).map((p: any) => `${m.toUpperCase()} ${path} ${p.name}`));
    // A signed asset link without its expires and sig is no link (404).
    expect(required.sort()).toEqual(["GET /v1/assets/{name} expires", "GET /v1/assets/{name} sig", "POST /v1beta/models/{model}:streamGenerateContent alt", "POST /v1beta/{creator}/{slug}:streamGenerateContent alt"]);
  });

  it("the request headers the spec lists: x-mg-trace-id on the media routes, x-mg-idempotency-key as a ULID or UUID; Mcp-Session-Id on MCP", () => {
    const param = (path: string, m: string, name: string) => doc.paths[path][m].parameters.find((p: any) => p.in === "header" && p.name === name);
    for (const path of ["/v1/videos", "/v1/rerank", "/v1/images/generations", "/v1/embeddings"]) expect(param(path, "post", "x-mg-trace-id"), path).toBeDefined();
    const pattern = new RegExp(param("/v1/chat/completions", "post", "x-mg-idempotency-key").schema.pattern);
    expect(["01JD8Z6Y5R3V7N4K2M1Q0P9W8X", "0b6ac0a4-9d2b-4f7e-8a61-3c2e4b5d6f70", "retry-1"].map((k) => pattern.test(k))).toEqual([true, true, false]);
    expect(param("/mcp", "delete", "Mcp-Session-Id")).toBeDefined();
  });

  it("the catalog takes x-api-key as the Messages routes do, and says so; with anthropic-version it pages and answers in Anthropic's shape", () => {
    for (const path of ["/v1/models", "/v1/models/{creator}/{model}", "/v1/models/{id}", "/v1/models/{creator}/{model}/endpoints", "/v1/messages"]) {
      expect(doc.paths[path][path === "/v1/messages" ? "post" : "get"].security, path).toEqual([{ bearerAuth: [] }, { anthropicApiKey: [] }]);
    }
    expect(doc.components.securitySchemes.anthropicApiKey.description).toContain("/v1/models");
    const list = doc.paths["/v1/models"].get;
    expect(list.parameters.filter((p: any) => p.in === "query").map((p: any) => p.name)).toEqual(["limit", "after_id", "before_id"]);
    expect(list.parameters.find((p: any) => p.name === "anthropic-version")).toMatchObject({ in: "header", required: false });
    expect(list.responses["200"].content["application/json"].schema.anyOf).toEqual([{ $ref: "#/components/schemas/ModelList" }, { $ref: "#/components/schemas/AnthropicModelList" }]);
    expect(doc.paths["/v1/models/{id}"].get.responses["200"].content["application/json"].schema.anyOf).toContainEqual({ $ref: "#/components/schemas/AnthropicModelInfo" });
  });

  it("the catalog says its answers to anthropic-version carry request-id, and its errors then come in Anthropic's envelope with it", () => {
    for (const path of ["/v1/models", "/v1/models/{creator}/{model}", "/v1/models/{id}", "/v1/models/{creator}/{model}/endpoints"]) {
      const op = doc.paths[path].get;
      for (const [code, r] of Object.entries<any>(op.responses)) {
        if (code === "200") continue;
        expect(deref(deref(r).headers?.["request-id"])?.description, `${path} ${code}`).toContain("anthropic-version");
        expect(deref(r).description, `${path} ${code}`).toContain("Anthropic's envelope");
      }
      if (path.endsWith("/endpoints")) continue; // its answer has no Anthropic shape, nor request-id
      const ok = deref(op.responses["200"].headers["request-id"]);
      expect(ok?.required, path).not.toBe(true); // not sent without anthropic-version
      expect(ok?.description, path).toContain("anthropic-version");
    }
  });

  it("the Messages routes' answers, errors too, name request-id (the Anthropic SDK's requestID); every 401 names x-should-retry", () => {
    for (const path of ["/v1/messages", "/v1/messages/count_tokens"]) {
      for (const [code, r] of Object.entries<any>(doc.paths[path].post.responses)) expect(deref(r).headers?.["request-id"], `${path} ${code}`).toBeDefined();
    }
    const without: string[] = [];
    for (const [path, m, op] of operations()) {
      if (path.startsWith("/admin/") || !op.responses["401"]) continue;
      if (!deref(op.responses["401"]).headers?.["x-should-retry"]) without.push(`${m.toUpperCase()} ${path}`);
    }
    expect(without).toEqual([]);
    expect(Object.keys(doc.paths["/v1/messages"].post.responses)).toContain("401");
    // So does a 400 (an upstream's refusal of the request, docs/routing.md: no retry mends it).
    expect(deref(doc.paths["/v1/chat/completions"].post.responses["400"]).headers["x-should-retry"]).toBeDefined();
  });

  it("an error answer after billed work (a Responses mcp loop's failed later turn) may carry x-mg-cost-usd: the model routes' errors declare it", () => {
    const routes: [string, string][] = [["/v1/responses", "502"], ["/v1/chat/completions", "400"], ["/v1/messages", "502"], ["/v1beta/models/{model}:generateContent", "504"]];
    for (const [path, code] of routes) {
      const cost = deref(deref(doc.paths[path].post.responses[code]).headers?.["x-mg-cost-usd"]);
      expect(cost?.description, `${path} ${code}`).toContain("an error after billed work");
    }
  });

  it("every POST the idempotency keys apply to documents their 409 CONFLICT key_in_progress with Retry-After", () => {
    const without: string[] = [];
    let posts = 0;
    for (const [path, m, op] of operations()) {
      if (m !== "post" || path.startsWith("/admin/") || path === "/v1/videos" || op.responses["405"]) continue;
      posts++;
      const r = deref(op.responses["409"]);
      if (!r?.description?.includes("key_in_progress") || !r.headers?.["Retry-After"]) without.push(path);
    }
    expect(posts).toBeGreaterThan(10);
    expect(without).toEqual([]);
    // A GET keeps no idempotency record: no 409 there.
    expect(doc.paths["/v1/models"].get.responses["409"]).toBeUndefined();
  });

  it("GET /openapi.json and every filter of GET /admin/v1/usage are documented", () => {
    expect(doc.paths["/openapi.json"].get.security).toEqual([]);
    const filters = doc.paths["/admin/v1/usage"].get.parameters.filter((p: any) => p.in === "query").map((p: any) => p.name);
    expect(filters).toEqual(expect.arrayContaining(["since", "until", "group_by", "bucket", "project", "key", "model", "provider", "endpoint", "include_sandbox"]));
  });
  it("the images route documents its 410 (asset_gone on a replay), and the signed asset route is described, without a key", () => {
    const images = doc.paths["/v1/images/generations"].post.responses;
    expect(deref(images["410"]).description).toContain("asset_gone");
    expect(deref(images["410"]).content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ErrorEnvelope" });
    expect(doc.paths["/v1/videos"].post.responses["410"]).toBeUndefined(); // a gone video runs its job again
    const asset = doc.paths["/v1/assets/{name}"].get;
    expect(asset.security).toEqual([]);
    expect(Object.keys(asset.responses).sort()).toEqual(["200", "206", "404", "410", "416", "503"]);
    expect(asset.responses["410"].description).toContain("link_expired");
    expect(asset.parameters.map((p: any) => `${p.in}:${p.name}`)).toEqual(["path:name", "query:expires", "query:sig", "header:Range"]);
    expect(asset.responses["206"].headers["Content-Range"]).toBeDefined();
  });
});
