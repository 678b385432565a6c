// auth: Bearer (or x-api-key on the Anthropic-protocol endpoints and the catalog, x-goog-api-key or ?key= on the
// Gemini ones) -> project, key id and sandbox flag.
// Keys are looked up by sha256 and the hash compared in constant time; the key itself is never logged.
import { createHash, timingSafeEqual } from "node:crypto";
import { definePlugin } from "../../core/pipeline/define.ts";
import { DO_NOT_RETRY, GatewayError } from "../../core/errors.ts";
import { KEY_PATTERN } from "../../core/keys/keys.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import { anthropicCatalog } from "../../core/endpoints/models-anthropic.ts";
import type { KeyRuntime, RuntimeConfig } from "../../core/config/runtime.ts";

function presentedKey(ctx: GatewayContext): string | undefined {
  const h = ctx.headers.authorization;
  if (typeof h === "string" && h.length > 7 && h.slice(0, 7).toLowerCase() === "bearer ") return h.slice(7).trim();
  // The catalog too: the Anthropic SDK's models.list/retrieve and Claude Code's model discovery
  // (`${ANTHROPIC_BASE_URL}/v1/models`) send the key as they send it to /v1/messages.
  if (ctx.protocol === "anthropic" || (ctx.endpoint === "models" && ctx.protocol === "openai")) {
    const x = ctx.headers["x-api-key"];
    if (typeof x === "string" && x) return x.trim();
  }
  // The Gemini SDKs send x-goog-api-key; Google's REST examples put the key in ?key=.
  if (ctx.protocol === "gemini") {
    const g = ctx.headers["x-goog-api-key"];
    if (typeof g === "string" && g) return g.trim();
    return queryKey(ctx.path);
  }
  return undefined;
}

/**
 * The missing-key 401 names where this protocol's clients put a key (what presentedKey reads for it). The catalog
 * asked by an anthropic-version client (the Anthropic SDK's models.list) is answered as Anthropic: its hint too.
 */
function missingKeyMessage(ctx: GatewayContext): string {
  if (ctx.protocol === "anthropic" || anthropicCatalog(ctx)) return "Missing API key: send the mg_live_… key in x-api-key (or Authorization: Bearer)";
  if (ctx.protocol === "gemini") return "Missing API key: send the mg_live_… key in x-goog-api-key or ?key=";
  return "Missing API key: send Authorization: Bearer mg_live_…";
}

function queryKey(path: string): string | undefined {
  const q = path.indexOf("?");
  return q === -1 ? undefined : new URLSearchParams(path.slice(q + 1)).get("key")?.trim() || undefined;
}

/**
 * A 401. `final` (the key is missing, malformed, unknown to the store, revoked or expired): no retry can pass, and
 * x-should-retry: false says so to Claude Code, which otherwise retries every 401 for minutes. Not final: a key the
 * store could not be asked about, which may work once it is back.
 */
function deny(ctx: GatewayContext, code: "INVALID_API_KEY" | "EXPIRED_API_KEY", message: string, final = true): GatewayError {
  const init = final ? { headers: { ...DO_NOT_RETRY } } : {};
  // The rerank endpoint names a missing or invalid key UNAUTHORIZED (spec, Authentication 4); an expired one is
  // EXPIRED_API_KEY there as everywhere (spec, Errors), so its client can tell "renew the key" from "wrong key".
  if (ctx.endpoint === "rerank" && code === "INVALID_API_KEY") return new GatewayError(401, "UNAUTHORIZED", message, init);
  return new GatewayError(401, code, message, init);
}

/**
 * Keys that matched a record, per config snapshot: a client sends the same key on every request, and hashing it
 * each time was the plugin's largest cost. Only matches are kept (unknown keys cannot fill it), at most
 * KNOWN_MAX of them; revocation and expiry are still checked on the record every time, and a reload starts over.
 */
const KNOWN_MAX = 10_000;
const known = new WeakMap<RuntimeConfig, Map<string, KeyRuntime>>();

function lookup(config: RuntimeConfig, key: string): KeyRuntime | undefined {
  let byKey = known.get(config);
  if (!byKey) known.set(config, (byKey = new Map()));
  const hit = byKey.get(key);
  if (hit) return hit;
  const digest = createHash("sha256").update(key).digest();
  const record = config.keys.get(digest.toString("hex"));
  if (!record || !timingSafeEqual(record.hash, digest)) return undefined;
  if (byKey.size >= KNOWN_MAX) byKey.clear();
  byKey.set(key, record);
  return record;
}

const digestOf = (key: string) => createHash("sha256").update(key).digest();

/** A key created through the admin API: this replica's cache, else (once) the store. */
function storedKey(ctx: GatewayContext, key: string): KeyRuntime | Promise<KeyRuntime | undefined> | undefined {
  const digest = digestOf(key);
  const found = ctx.gateway.apiKeys.find(digest.toString("hex"));
  const check = (r: KeyRuntime | undefined) => (r && timingSafeEqual(r.hash, digest) ? r : undefined);
  return found instanceof Promise ? found.then(check) : check(found);
}

export default definePlugin({
  name: "auth",
  handle(ctx, next) {
    const key = presentedKey(ctx);
    if (!key) throw deny(ctx, "INVALID_API_KEY", missingKeyMessage(ctx));
    if (!KEY_PATTERN.test(key)) throw deny(ctx, "INVALID_API_KEY", "Malformed API key: keys start with mg_live_ or mg_test_");
    const record = lookup(ctx.config, key) ?? storedKey(ctx, key);
    // The YAML path stays synchronous (no promise per request); only a key the cache does not know waits.
    if (record instanceof Promise) return record.then((r) => admit(ctx, key, r, next));
    return admit(ctx, key, record, next);
  },
});

function admit(ctx: GatewayContext, key: string, record: KeyRuntime | undefined, next: () => Promise<void>): Promise<void> {
  const project = record && ctx.config.projects.get(record.projectId);
  // A stored key of a project no longer in the config is as good as unknown.
  if (!record || !project) {
    // A key the store could not be asked about (down) may be valid: refused, but not for good.
    const final = !!record || ctx.gateway.apiKeys.absent(digestOf(key).toString("hex"));
    throw deny(ctx, "INVALID_API_KEY", "Unknown API key", final);
  }
  if (record.revoked) throw deny(ctx, "INVALID_API_KEY", "This API key has been revoked");
  if (record.expiresAt !== null && Date.now() >= record.expiresAt) {
    throw deny(ctx, "EXPIRED_API_KEY", `This API key expired at ${new Date(record.expiresAt).toISOString()}`);
  }
  ctx.auth = {
    projectId: record.projectId,
    project,
    keyId: record.id,
    sandbox: key.startsWith("mg_test_"),
    key: record,
  };
  ctx.gateway.apiKeys.used(record, Date.now());
  return next();
}
