// The cache key: a sha256 over a canonical JSON (object keys sorted, so key order never matters) of everything that
// changes the answer — the project, live or sandbox (sandbox keys are answered by the simulator), the endpoint, the
// client protocol and its method (Gemini's embedContent and batchEmbedContents share a body but not an answer shape),
// streamed or not (a stream replays as a stream, JSON as JSON), the headers an upstream reads (anthropic-beta,
// anthropic-version), and the body — without the cache option itself and the end-user ids an answer does not echo.
import { createHash } from "node:crypto";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import { canonicalJson } from "../../core/http/canonical-json.ts";

/** Bumped when what an entry holds or how keys are made changes: old entries are then never read. */
const KEY_VERSION = 1;

/**
 * Body fields that identify the caller's end user for the provider's abuse checks and are not part of the answer.
 * The Responses API echoes `user`, `metadata` and the rest in its response object, so nothing is left out there.
 */
const NOT_IN_ANSWER: Record<string, readonly string[]> = {
  chat: ["user", "metadata", "safety_identifier", "prompt_cache_key"],
  messages: ["metadata"],
  embeddings: ["user"],
  rerank: ["user"],
};

/** Request headers a provider reads (forwarded to Anthropic-protocol upstreams); beta names in any order are one set. */
function answerHeaders(ctx: GatewayContext): Record<string, string> | undefined {
  const beta = header(ctx, "anthropic-beta");
  const version = header(ctx, "anthropic-version");
  if (beta === undefined && version === undefined) return undefined;
  const out: Record<string, string> = {};
  if (beta !== undefined) out["anthropic-beta"] = beta.split(",").map((b) => b.trim()).filter(Boolean).sort().join(",");
  if (version !== undefined) out["anthropic-version"] = version.trim();
  return out;
}

function header(ctx: GatewayContext, name: string): string | undefined {
  const v = ctx.headers[name];
  return Array.isArray(v) ? v.join(",") : v;
}

/** The body as it bears on the answer: `stream` and the cache option out (stream is a key part of its own). */
function answerBody(ctx: GatewayContext): Record<string, unknown> {
  const body: Record<string, unknown> = { ...ctx.body };
  delete body.stream;
  for (const f of NOT_IN_ANSWER[ctx.endpoint] ?? []) delete body[f];
  const gateway = (body.providerOptions as any)?.gateway;
  if (gateway && typeof gateway === "object" && "cache" in gateway) {
    const { cache: _cache, ...rest } = gateway;
    body.providerOptions = { ...(body.providerOptions as object), gateway: rest };
  }
  return body;
}

/** The request's cache key (base64url sha256). Throws RangeError for a body nested too deep to walk. */
export function cacheKey(ctx: GatewayContext): string {
  const parts = {
    v: KEY_VERSION,
    project: ctx.auth!.projectId,
    sandbox: ctx.auth!.sandbox,
    endpoint: ctx.endpoint,
    protocol: ctx.protocol,
    action: ctx.params.action ?? null,
    stream: ctx.body?.stream === true,
    headers: answerHeaders(ctx) ?? null,
    body: answerBody(ctx),
  };
  return createHash("sha256").update(canonicalJson(parts)).digest("base64url");
}
