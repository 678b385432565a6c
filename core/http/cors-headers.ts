// Which request headers a page may send the API, and which response headers its script may read. A preflight names
// the headers the request will carry; a browser refuses the call unless the answer allows every one of them.

/** Headers the gateway reads or the SDKs send from a browser (openai, @anthropic-ai/sdk, @google/genai, MCP clients). */
const ACCEPTED = new Set([
  "authorization", "x-api-key", "api-key", "x-goog-api-key",
  "content-type", "accept", "accept-language", "content-language", "cache-control", "user-agent",
  "idempotency-key", "x-request-id", "last-event-id",
  "traceparent", "tracestate", "baggage",
]);
/** Families: anthropic-version/-beta/-dangerous-direct-browser-access, openai-organization/-project, x-stainless-* (both SDKs' telemetry), x-goog-api-client, the gateway's own x-mg-*, mcp-session-id/-protocol-version. */
const ACCEPTED_PREFIXES = ["anthropic-", "openai-", "x-stainless-", "x-goog-", "x-mg-", "mcp-"];

/**
 * What a page's script may read of an answer: every header ("*", which holds for calls without cookies, the only
 * kind the gateway answers: it never sends Allow-Credentials), and by name the ones clients act on, for a browser
 * that takes "*" literally.
 */
export const EXPOSED_HEADERS = [
  "*", "x-request-id", "request-id", "retry-after", "retry-after-ms", "x-should-retry",
  "x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests",
  "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens",
  "x-ratelimit-remaining", "x-ratelimit-reset", "mcp-session-id", "x-mg-generation-id", "x-mg-cost-usd",
  "x-mg-provider", "x-mg-upstream-model", "x-mg-upstream-request-id", "x-mg-dropped-params", "x-mg-cache",
].join(", ");

export class CorsHeaders {
  private readonly extra: Set<string>;
  /** The Allow-Headers of a preflight that asked for a header not accepted: what is, so the browser names the rest. */
  private readonly listed: string;

  /** `extra`: server.cors.allow_headers, the headers the operator's own plugins read. */
  constructor(extra: readonly string[]) {
    this.extra = new Set(extra.map((h) => h.toLowerCase()));
    this.listed = [...ACCEPTED, ...this.extra].join(", ");
  }

  private accepts(name: string): boolean {
    return ACCEPTED.has(name) || this.extra.has(name) || ACCEPTED_PREFIXES.some((p) => name.startsWith(p));
  }

  /**
   * Access-Control-Allow-Headers for a preflight's Access-Control-Request-Headers: those asked for when every one is
   * accepted, else the accepted ones (the browser then refuses the call, naming the header that is missing).
   */
  allow(requested: string | undefined): string | undefined {
    if (!requested) return undefined;
    const names = requested.split(",").map((h) => h.trim().toLowerCase()).filter(Boolean);
    if (!names.length) return undefined;
    return names.every((n) => this.accepts(n)) ? names.join(", ") : this.listed;
  }
}
