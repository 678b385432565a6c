// The admin API's routes, under /admin/v1 (docs/admin-api.md). Every GET needs a read- or write-scope admin key;
// every change a write-scope one.
import { validateAdminKeyCreate, validateAdminKeyRevoke, validateAdminKeyRotate, validateAdminKeyUpdate } from "../generated/validators.js";
import type { AdminRoute } from "./route.ts";
import { budgets, rateLimits, usage } from "./usage.ts";
import { getRequest, searchRequests } from "./requests.ts";
import { createKey, getKey, listKeys, revokeKey, rotateKey, updateKey } from "./keys.ts";
import { configState, models, providers } from "./health.ts";
import { consoleRoutes } from "./console-routes.ts";

const RANGE = [
  { name: "since", description: "ISO 8601, ms since the epoch, or back from now (24h, 7d, 30m). Default: 24h before until." },
  { name: "until", description: "Same forms. Default: now." },
];

export const adminRoutes: AdminRoute[] = [
  {
    method: "GET", path: "/usage", scope: "read", handle: usage,
    openapi: {
      operationId: "admin_usage", responseSchema: "AdminUsage", summary: "Usage and spend over a range, grouped and bucketed",
      query: [...RANGE,
        { name: "group_by", description: "Comma-separated: project, key, model, provider, endpoint. key groups by project too (a key id names one key per project)." },
        { name: "bucket", description: "hour, day or none (default: the whole range)." },
        ...["project", "key", "model", "provider", "endpoint"].map((name) => ({ name, description: name === "key" ? "Only this key id; without project, one row per project that has it." : `Only this ${name}.` })),
        { name: "include_sandbox", description: "true: count mg_test_ traffic too." }],
    },
  },
  { method: "GET", path: "/budgets", scope: "read", handle: budgets, openapi: { operationId: "admin_budgets", responseSchema: "AdminBudgets", summary: "Budget state per project and per key: period, limit, spent, reserved, remaining", query: [{ name: "project", description: "Only this project." }] } },
  { method: "GET", path: "/rate-limits", scope: "read", handle: rateLimits, openapi: { operationId: "admin_rate_limits", responseSchema: "AdminRateLimits", summary: "Rate-limit windows per project and key, read without charging them", query: [{ name: "project", description: "Only this project." }, { name: "key", description: "Only this key id." }] } },
  {
    method: "GET", path: "/requests", scope: "read", handle: searchRequests,
    openapi: {
      operationId: "admin_search_requests", responseSchema: "AdminRequestPage", summary: "Search the ledger, newest first, paged",
      query: [...RANGE.map((p) => ({ ...p, description: "ISO 8601, ms since the epoch, or back from now." })),
        ...["generation_id", "request_id", "project", "key", "model", "provider", "endpoint"].map((name) => ({ name, description: `Only records with this ${name.replace("_", " ")}.` })),
        { name: "status", description: "An HTTP status (429) or a class (4xx)." },
        { name: "limit", description: "Page size, 1-500 (default 50)." },
        { name: "cursor", description: "The previous page's next." }],
    },
  },
  { method: "GET", path: "/requests/:generation_id", scope: "read", handle: getRequest, openapi: { operationId: "admin_get_request", responseSchema: "AdminRequest", summary: "One request's ledger record with its attempts" } },
  {
    method: "GET", path: "/keys", scope: "read", handle: listKeys,
    openapi: { operationId: "admin_list_keys", responseSchema: "AdminKeyList", summary: "Every key (gateway.yaml's and the API's) with source, status, expiry, limits and last use", query: [{ name: "project", description: "Only this project." }, { name: "source", description: "yaml, api or any." }, { name: "status", description: "active, revoked, expired or any." }] },
  },
  { method: "POST", path: "/keys", scope: "write", validate: validateAdminKeyCreate, handle: createKey, openapi: { operationId: "admin_create_key", responseSchema: "AdminKeyCreated", summary: "Create a key for a project (shown once; every replica accepts it at once)", requestSchema: "AdminKeyCreateRequest", created: true } },
  { method: "GET", path: "/keys/:project/:id", scope: "read", handle: getKey, openapi: { operationId: "admin_get_key", responseSchema: "AdminKey", summary: "One key" } },
  { method: "PATCH", path: "/keys/:project/:id", scope: "write", validate: validateAdminKeyUpdate, handle: updateKey, openapi: { operationId: "admin_update_key", responseSchema: "AdminKey", summary: "Change an API key's name, expiry or limits", requestSchema: "AdminKeyUpdateRequest" } },
  { method: "POST", path: "/keys/:project/:id/revoke", scope: "write", validate: validateAdminKeyRevoke, bodyOptional: true, handle: revokeKey, openapi: { operationId: "admin_revoke_key", responseSchema: "AdminKey", summary: "Revoke an API key (every replica refuses it within store.key_refresh_ms)", requestSchema: "AdminKeyRevokeRequest" } },
  { method: "POST", path: "/keys/:project/:id/rotate", scope: "write", validate: validateAdminKeyRotate, bodyOptional: true, handle: rotateKey, openapi: { operationId: "admin_rotate_key", responseSchema: "AdminKeyCreated", summary: "Rotate an API key: a new key now, the old one expires after the overlap", requestSchema: "AdminKeyRotateRequest", created: true } },
  { method: "GET", path: "/providers", scope: "read", handle: providers, openapi: { operationId: "admin_providers", responseSchema: "AdminProviders", summary: "Providers: enabled or why not, endpoints and their circuit states" } },
  { method: "GET", path: "/models", scope: "read", handle: models, openapi: { operationId: "admin_models", responseSchema: "AdminModels", summary: "Models and their endpoints: circuit state, latency, throughput, uptime" } },
  { method: "GET", path: "/config", scope: "read", handle: configState, openapi: { operationId: "admin_config", responseSchema: "AdminConfig", summary: "The config file and its last reload's result, the store's state, the key cache" } },
  ...consoleRoutes,
];
