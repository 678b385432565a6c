// What "the same request" means for an idempotency key, and whether a keyed request will only replay an answer its key
// already holds. In core because two plugins need it: plugins/idempotency keeps and replays answers under the hash,
// and plugins/budget, which runs before it, asks (only when it would refuse the request) whether the request is a
// replay: a replay bills nothing, so a budget spent by the request that made the answer must not refuse collecting it.
import { createHash } from "node:crypto";
import { ulid } from "ulid";
import type { GatewayContext } from "../pipeline/context.ts";
import { canonicalJson } from "./canonical-json.ts";
import { idempotencyKey, idempotencyScope } from "./idempotency-key.ts";

declare module "../pipeline/context.ts" {
  interface GatewayContext {
    /** idempotencyRequestHash of `body` (the very object: a plugin that replaces ctx.body gets a new hash). */
    idempotencyHash?: { body: unknown; hash: string };
  }
}

/**
 * The body, whatever the order of its members, and the API it came through (Gemini's embedContent, batchEmbedContents
 * and OpenAI's embeddings reach one endpoint with one rebuilt body, but answer in three shapes). A different one with
 * the same key is a 422.
 */
export function idempotencyRequestHash(ctx: GatewayContext): string {
  // Hashing a large body blocks the event loop for tens of milliseconds: once per request, whoever asks first.
  const memo = ctx.idempotencyHash;
  if (memo && memo.body === ctx.body) return memo.hash;
  const request = { protocol: ctx.protocol, action: ctx.params.action ?? null, body: ctx.body ?? null };
  const hash = createHash("sha256").update(canonicalJson(request)).digest("base64url");
  ctx.idempotencyHash = { body: ctx.body, hash };
  return hash;
}

/**
 * The hash records had before idempotencyRequestHash (the body's JSON text as it came): a retry of a request made
 * before an upgrade still finds its record, kept 24 hours, instead of a 422. Removable once no record of that age remains.
 */
export function legacyIdempotencyRequestHash(ctx: GatewayContext): string {
  return createHash("sha256").update(JSON.stringify(ctx.body ?? null)).digest("base64url");
}

/** A probe's claim is given back at once; should that fail, it only delays a real claim this long. */
const PROBE_LEASE_MS = 1_000;

/**
 * True when this request's idempotency key holds a finished answer for this very body (current or legacy hash), which
 * plugins/idempotency will replay. Two store calls (the store has no read-only lookup, so a key nobody holds is
 * claimed for a moment and given back): the budget asks only for a request it would otherwise refuse. Any doubt (no
 * key, a bad one, a request still running under it, another body, a store error) answers false: the request is then
 * refused as any other. /videos attach by key themselves (core/endpoints/video-key.ts).
 */
export async function replaysKeptAnswer(ctx: GatewayContext): Promise<boolean> {
  if (ctx.method !== "POST" || !ctx.auth || ctx.endpoint === "videos") return false;
  let key: string | undefined;
  try {
    key = idempotencyKey(ctx);
  } catch {
    return false; // the idempotency plugin answers the 400
  }
  if (key === undefined) return false;
  const store = ctx.gateway.store;
  const scope = idempotencyScope(ctx.auth.projectId, ctx.endpoint, key, ctx.auth.sandbox);
  const owner = `probe:${ctx.requestId}:${ulid()}`;
  try {
    const hash = idempotencyRequestHash(ctx);
    let state = await store.idempotencyBegin(scope, hash, owner, PROBE_LEASE_MS, Date.now());
    if (state.state === "new") await store.idempotencyRelease(scope, owner);
    if (state.state === "mismatch") {
      const legacy = legacyIdempotencyRequestHash(ctx);
      if (legacy === hash) return false;
      state = await store.idempotencyBegin(scope, legacy, owner, PROBE_LEASE_MS, Date.now());
      if (state.state === "new") await store.idempotencyRelease(scope, owner);
    }
    return state.state === "done";
  } catch {
    return false; // the store is out: reserve as usual
  }
}
