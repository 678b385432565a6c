// The error answers /api/openapi.json documents per operation, in the shape each route family sends them: the
// gateway's envelope (OpenAI- and Anthropic-protocol routes), Google's on the Gemini routes (core/errors.ts
// toGeminiJSON), and on the MCP routes the JSON-RPC error of the MCP transport once the key is accepted
// (core/endpoints/mcp.ts) — what comes before it (the key, the body) is the gateway's envelope.
import { anthropicRequestIdHeader, catalogRequestIdHeader, namedHeaders, rateLimitHeaders, requestIdHeader, retryHeaders } from "./openapi-headers.ts";

type Json = any;

const ENVELOPE = { $ref: "#/components/schemas/ErrorEnvelope" };
const GOOGLE = { $ref: "#/components/schemas/GeminiErrorEnvelope" };
const JSON_RPC = { $ref: "#/components/schemas/McpJsonRpcError" };
const EITHER = { anyOf: [JSON_RPC, ENVELOPE] };

const ERROR_STATUSES: Record<string, string> = {
  "400": "Invalid request (the message and details name the field)",
  "401": "Missing, malformed, unknown, revoked or expired API key",
  "402": "Project budget exhausted",
  "403": "Model not allowed for this project",
  "404": "Unknown model",
  "409": "CONFLICT (details.reason key_in_progress): a request with this idempotency key is still in progress; retry after Retry-After to get its answer, or send a new key",
  "413": "Request body too large",
  "422": "Understood but not served: an idempotency key reused with another body, embeddings dimensions the model cannot give",
  "429": "Rate limited (see Retry-After)",
  "500": "Gateway fault",
  "502": "Upstream error after all fallbacks",
  "503": "Unavailable for now, retry after Retry-After: GUARDRAIL_UNAVAILABLE (a guardrail could not check the request), STORE_UNAVAILABLE (the state store cannot answer), INTERNAL (the gateway is shutting down)",
  "504": "Upstream timeout",
};

/**
 * A 410, on the images route only: an idempotent replay whose images the gateway no longer keeps
 * (core/endpoints/image-replay.ts). A video request whose asset is gone runs its job again, so /videos has none.
 */
const GONE = "INVALID_REQUEST with details.reason asset_gone: a repeat with this idempotency key whose images are no longer kept (removed, or another replica's assets_dir); send the request with a new key to generate (and pay for) them again";

/** Google's shape: the gateway's code is the ErrorInfo detail's reason. */
const GEMINI_NOTES: Record<string, string> = {
  "400": "; also a 5xx no retry would mend (an upstream refusing the gateway's credentials), as FAILED_PRECONDITION, which the Gemini SDKs do not retry",
  "502": " that a retry may mend",
};

const MCP_STATUSES: Record<string, { description: string; schema: Json }> = {
  "400": { description: "A request other than initialize without Mcp-Session-Id, or no JSON-RPC message (JSON-RPC error); a body that is not JSON (the gateway's envelope, INVALID_REQUEST)", schema: EITHER },
  "401": { description: "Missing, malformed, unknown, revoked or expired API key", schema: ENVELOPE },
  "403": { description: "A sandbox key: MCP tools run for real and need a live key (mg_live_…)", schema: JSON_RPC },
  "404": { description: "No such session (it ended, expired, or is another key's): start over with initialize", schema: JSON_RPC },
  "406": { description: "Accept must list application/json and text/event-stream (POST), text/event-stream (GET)", schema: JSON_RPC },
  "413": { description: "Request body too large", schema: ENVELOPE },
  "500": { description: "Gateway fault", schema: EITHER },
  "503": { description: "Unavailable for now (the gateway is shutting down): retry after Retry-After", schema: ENVELOPE },
};
const MCP_GET_CONFLICT = { description: "The session's event stream is already open", schema: JSON_RPC };

const ADMIN_ERRORS: Record<string, string> = {
  "400": "Invalid body or query parameter (the message and details name the field)",
  "401": "Missing, malformed, unknown, revoked or expired admin key (project keys are refused here)",
  "403": "FORBIDDEN: a read-scope admin key on a route that changes state",
  "404": "No such project, key or request",
  "409": "CONFLICT: the key id is taken, or the key is declared in gateway.yaml (changed in the file)",
  "413": "Request body too large",
  "503": "STORE_UNAVAILABLE: the state store cannot answer (changes and store-backed reads); retry after Retry-After",
};

function response(description: string, schema: Json, headers: Record<string, Json>): Json {
  return { description, headers, content: { "application/json": { schema } } };
}

/** 409 (idempotency key in progress), 429 and 503 say when to retry. */
const waits = (code: string) => (code === "409" || code === "429" || code === "503" ? retryHeaders() : {});
/**
 * Where the gateway may tell the SDKs whether to retry: an upstream's refusal of the request (400), a key no retry
 * passes (401), a budget hold (402), a 502 no retry mends.
 */
const retryVerdict = (code: string) => (["400", "401", "402", "502"].includes(code) ? namedHeaders(["x-should-retry"]) : {});

/** The statuses every POST of the API adds: the idempotency key's 409. */
const POST_ONLY = new Set(["409"]);

/** components.responses: every error answer once, by family and status (operations refer to them). */
export function errorComponents(): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [code, description] of Object.entries(ERROR_STATUSES)) {
    // A refusal after the provider was picked (a guardrail's, an upstream's) names it and has a ledger record.
    const headers = { ...requestIdHeader(), ...rateLimitHeaders(), ...waits(code), ...retryVerdict(code), ...namedHeaders(["x-mg-generation-id", "x-mg-provider", "x-mg-resolved-provider", "x-mg-upstream-request-id", "x-mg-trace-id"]) };
    // One after billed work (a Responses mcp loop's failed later turn) also says what it cost
    // (core/observability/headers.ts); the catalog bills nothing.
    const billed = { ...headers, ...namedHeaders(["x-mg-cost-usd"]) };
    out[`Error${code}`] = response(description, ENVELOPE, billed);
    out[`MessagesError${code}`] = response(description, ENVELOPE, { ...billed, ...anthropicRequestIdHeader() });
    // core/http/respond.ts: the catalog answers an Anthropic client's errors as the Messages routes do.
    out[`CatalogError${code}`] = response(`${description}. With anthropic-version: Anthropic's envelope (type: "error", error.type), with request-id`, ENVELOPE, { ...headers, ...catalogRequestIdHeader() });
    out[`GeminiError${code}`] = response(`${description}${GEMINI_NOTES[code] ?? ""} (Google's error shape; the gateway's code is the ErrorInfo reason)`, GOOGLE, billed);
  }
  out.Error410 = response(GONE, ENVELOPE, { ...requestIdHeader(), ...rateLimitHeaders() });
  // No rate limits apply on the MCP routes: tool calls have windows of their own.
  for (const [code, { description, schema }] of Object.entries({ ...MCP_STATUSES, "409": MCP_GET_CONFLICT })) {
    out[`McpError${code}`] = response(description, schema, { ...requestIdHeader(), ...waits(code), ...retryVerdict(code) });
  }
  // core/admin/handle.ts: a 503 with Retry-After alone.
  for (const [code, description] of Object.entries(ADMIN_ERRORS)) {
    out[`AdminError${code}`] = response(description, ENVELOPE, { ...requestIdHeader(), ...(code === "503" ? namedHeaders(["Retry-After"]) : {}) });
  }
  return out;
}

const refs = (prefix: string, codes: string[]): Record<string, Json> =>
  Object.fromEntries(codes.sort().map((code) => [code, { $ref: `#/components/responses/${prefix}${code}` }]));

/** The statuses of a route: a POST may meet its idempotency key still in progress (409), unless it keeps no record. */
const statuses = (idempotent: boolean) => Object.keys(ERROR_STATUSES).filter((code) => idempotent || !POST_ONLY.has(code));

/** The images route's 410 (asset_gone on a replay). */
export const goneError = () => refs("Error", ["410"]);
/** An OpenAI- or Responses-protocol route's errors: the gateway's envelope. `idempotent`: a POST the idempotency keys apply to. */
export const gatewayErrors = (idempotent = false) => refs("Error", statuses(idempotent));
/** A Messages route's errors: the gateway's envelope with type: "error", and request-id as on its answers. */
export const messagesErrors = (idempotent = false) => refs("MessagesError", statuses(idempotent));
/** The catalog's errors: the gateway's envelope, Anthropic's with request-id when the request has anthropic-version. */
export const catalogErrors = (idempotent = false) => refs("CatalogError", statuses(idempotent));
/** A Gemini route's errors: Google's shape, for every status. */
export const geminiErrors = (idempotent = false) => refs("GeminiError", statuses(idempotent));
/**
 * An MCP route's errors; GET may find the session's stream already open (JSON-RPC), a POST its idempotency key still
 * in progress (the gateway's envelope: before the MCP transport).
 */
export const mcpErrors = (method: string) => ({
  ...refs("McpError", [...Object.keys(MCP_STATUSES), ...(method === "GET" ? ["409"] : [])]),
  ...(method === "POST" ? refs("Error", ["409"]) : {}),
});
/** The admin API's errors. */
export const adminErrors = () => refs("AdminError", Object.keys(ADMIN_ERRORS));
