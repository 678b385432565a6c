// The headers /api/openapi.json documents (components.headers, referenced by name from each response), so generated
// clients and validators know what the gateway sends: the request id on every answer, the rate-limit windows, the
// wait on a 429 or 503, and who served an answer and what it cost.
type Json = any;

const int = { type: "integer", minimum: 0 };
const text = { type: "string" };

/** components.headers: name -> Header Object. */
export const HEADERS: Record<string, Json> = {
  "X-Request-Id": { description: "The request's id: the caller's X-Request-Id echoed, or one the gateway made. On every answer.", required: true, schema: text },
  "request-id": { description: "The same id as X-Request-Id, under Anthropic's name (the Anthropic SDK's requestID / request_id). On every answer of the Messages routes.", required: true, schema: text },
  "x-should-retry": { description: "false: no retry of this request can pass (a missing, malformed, unknown, revoked or expired key; an answer no endpoint could give), so the openai and Anthropic SDKs and Claude Code do not retry; true: a short wait will do (Retry-After)", schema: { enum: ["true", "false"] } },
  "X-RateLimit-Limit-Requests": { description: "Requests per minute of the tightest request window of the key and project (when they have rate limits)", schema: int },
  "X-RateLimit-Remaining-Requests": { description: "Requests left in the current minute window", schema: int },
  "X-RateLimit-Reset-Requests": { description: "Seconds until the request window has room again", schema: int },
  "X-RateLimit-Limit-Tokens": { description: "Tokens per minute of the tightest token window (when the key or project has one)", schema: int },
  "X-RateLimit-Remaining-Tokens": { description: "Tokens left in the current minute window", schema: int },
  "X-RateLimit-Reset-Tokens": { description: "Seconds until the token window has room again", schema: int },
  "X-RateLimit-Remaining": { description: "Tokens left in the current window (requests when only a request limit applies)", schema: int },
  "X-RateLimit-Reset": { description: "Unix timestamp (seconds) when that window rolls", schema: int },
  "Retry-After": { description: "Seconds to wait before retrying", schema: int },
  "retry-after-ms": { description: "The same wait in milliseconds, not rounded up (the openai and Anthropic SDKs read it first)", schema: int },
  "x-mg-generation-id": { description: "The request's ledger record (also providerMetadata.gateway.generationId); only where the request has one: it reached a provider, was a response-cache hit or was refused by a guardrail", schema: text },
  "x-mg-cost-usd": { description: "What the request cost, in USD (decimal string; 0 for sandbox keys and idempotent replays, the hit price for a response-cache hit); on JSON answers, an error after billed work included (a Responses mcp loop's failed later turn), not on streams (a stream's cost is in the ledger)", schema: { type: "string", pattern: "^\\d+(\\.\\d+)?$" } },
  "x-mg-provider": { description: "The provider that served the answer (cache for a response-cache hit)", schema: text },
  "x-mg-resolved-provider": { description: "The provider the request was routed to", schema: text },
  "x-mg-upstream-model": { description: "The upstream's own id for the model that served (the answer's model is the gateway id)", schema: text },
  "x-mg-upstream-request-id": { description: "The provider's own id for the call that answered (OpenAI's x-request-id, Anthropic's request-id, Bedrock's x-amzn-requestid, a Gemini answer's responseId), for a ticket with the provider; on an upstream error the gateway relays, its last attempt's. Only where the provider sent one", schema: text },
  "x-mg-dropped-params": { description: "Request fields left out or changed to a value the model takes (an output limit above the model's maximum lowered to it; thinking off on a model that cannot turn it off sent as the least it takes), as the client named them (comma-separated); tool names rewritten for the upstream are not listed", schema: text },
  "x-mg-cache": { description: "hit or miss, where the project uses the response cache", schema: { enum: ["hit", "miss"] } },
  "x-mg-original-request-id": { description: "A replay or cache hit: the request whose answer this is", schema: text },
  "Idempotent-Replayed": { description: "true: this is the stored answer of an earlier request with the same idempotency key; nothing was billed", schema: { enum: ["true"] } },
  "x-mg-token-count": { description: "How the tokens were counted: the provider's own count, a tokenizer, or estimate:chars", schema: text },
  "x-mg-trace-id": { description: "The caller's x-mg-trace-id, echoed", schema: text },
  "Mcp-Session-Id": { description: "The MCP session (from the initialize answer): send it with every later request of the session", schema: text },
};

const refs = (names: string[]): Record<string, Json> => Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));

export const RATE_LIMIT_HEADERS = Object.keys(HEADERS).filter((n) => n.startsWith("X-RateLimit-"));

/** Every answer: its request id. */
export const requestIdHeader = (): Record<string, Json> => refs(["X-Request-Id"]);
/** Every answer of a Messages route: the request id under Anthropic's name too. */
export const anthropicRequestIdHeader = (): Record<string, Json> => refs(["request-id"]);
/** The catalog's answers to a request with anthropic-version (the Anthropic SDK, Claude Code): request-id, then only. */
export const catalogRequestIdHeader = (): Record<string, Json> => ({
  "request-id": { description: "With anthropic-version: the same id as X-Request-Id, under Anthropic's name (the Anthropic SDK's requestID / request_id); not sent without it", schema: text },
});
/** Answers of an endpoint the rate limits apply to (once the request passed their check). */
export const rateLimitHeaders = (): Record<string, Json> => refs(RATE_LIMIT_HEADERS);
/** A 429 or 503: when to retry. */
export const retryHeaders = (): Record<string, Json> => refs(["Retry-After", "retry-after-ms"]);
/** Answers a provider made (or a cache hit, or a replay, stood in for). */
export const servedHeaders = (): Record<string, Json> => refs(["x-mg-provider", "x-mg-resolved-provider", "x-mg-upstream-model", "x-mg-upstream-request-id", "x-mg-dropped-params"]);
/** Answers that have a ledger record. */
export const billedHeaders = (): Record<string, Json> =>
  refs(["x-mg-generation-id", "x-mg-cost-usd", "x-mg-cache", "x-mg-original-request-id", "Idempotent-Replayed"]);
/** Named headers of components.headers (an endpoint's own: x-mg-token-count, x-mg-trace-id, Mcp-Session-Id). */
export const namedHeaders = (names: string[]): Record<string, Json> => refs(names);

/** Request headers an endpoint may take beyond the common ones (EndpointSpec.openapi.headers). */
export const REQUEST_HEADERS: Record<string, Json> = {
  "x-mg-trace-id": {
    name: "x-mg-trace-id", in: "header", required: false,
    description: "A trace id for correlation, echoed in the answer's x-mg-trace-id; a value of another form is ignored",
    schema: { type: "string", pattern: "^[\\w.:\\-/+=]{1,128}$" },
  },
  "Mcp-Session-Id": { name: "Mcp-Session-Id", in: "header", required: false, description: "The session the initialize answer named; needed on every request but initialize", schema: text },
  "MCP-Protocol-Version": { name: "MCP-Protocol-Version", in: "header", required: false, description: "The MCP protocol version the session agreed on", schema: text },
  "Last-Event-ID": { name: "Last-Event-ID", in: "header", required: false, description: "GET: resume the event stream after this event", schema: text },
  "anthropic-version": { name: "anthropic-version", in: "header", required: false, description: "Sent by the Anthropic SDK and Claude Code: the answer is then in the Anthropic Models API's shape", schema: text },
};

/** Idempotency-Key takes what clients of other APIs send; x-mg-idempotency-key a ULID or UUID (core/http/idempotency-key.ts). */
export const IDEMPOTENCY_HEADERS: Json[] = [
  {
    name: "Idempotency-Key", in: "header", required: false,
    description: "Within 24 hours a repeat with the same key and body gets the first answer, not billed again; 1 to 255 visible ASCII characters",
    schema: { type: "string", pattern: "^[\\x21-\\x7e]{1,255}$" },
  },
  {
    name: "x-mg-idempotency-key", in: "header", required: false,
    description: "As Idempotency-Key, but a ULID or a UUID (anything else is a 400)",
    schema: { type: "string", pattern: "^([0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})$" },
  },
];
