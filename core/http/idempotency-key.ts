// The idempotency key a client sent, validated: `Idempotency-Key` (any key of 1 to 255 visible ASCII characters, as
// clients of other APIs send them) or `x-mg-idempotency-key` (a ULID or UUID, as the spec says). A ULID or UUID is
// compared without regard to case, in either header; any other key exactly as sent.
// In core because two places read it: the idempotency plugin, and the videos endpoint (a key names the job); both
// keep their records in the store's idempotency table under `idempotencyScope`.
import { GatewayError } from "../errors.ts";
import type { GatewayContext } from "../pipeline/context.ts";

/** Spec, Limits: an idempotency key's record (and so its replay) lasts 24 hours. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

declare module "../pipeline/context.ts" {
  interface GatewayContext {
    /**
     * This request's answer will be kept under its idempotency key for a replay (set by plugins/idempotency once it
     * holds the key): what the answer points to (an image's file) must last as long as the record.
     */
    keptForReplay?: boolean;
    /**
     * Set by the budget plugin when it reserved nothing for a keyed request because its key already holds what it asks
     * for (a finished answer to replay: core/http/idempotent-replay.ts; a video job to attach to or collect:
     * core/endpoints/video-key.ts): makes the reservation it skipped (ctx.budget; 402 when there is no room). Whoever
     * finds it must run the request after all (the record expired, the claim was released or lapsed) calls it first,
     * so nothing reaches a provider unreserved.
     */
    reserveSkipped?: () => Promise<void>;
  }
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Stripe's bound (and character set) for an idempotency key, which the clients that send free-form keys follow. */
const FREE_FORM = /^[\x21-\x7e]{1,255}$/;

function badKey(ctx: GatewayContext, header: string, message: string): GatewayError {
  const code = ctx.endpoint === "images" || ctx.endpoint === "videos" || ctx.endpoint === "rerank" ? "BAD_REQUEST" : "INVALID_REQUEST";
  return new GatewayError(400, code, message, { details: { field: header } });
}

const isId = (key: string) => ULID.test(key) || UUID.test(key);
const canonical = (key: string) => (isId(key) ? key.toLowerCase() : key);

/** The key the client sent, validated; undefined when it sent none. */
export function idempotencyKey(ctx: GatewayContext): string | undefined {
  const a = ctx.headers["idempotency-key"];
  const b = ctx.headers["x-mg-idempotency-key"];
  if (Array.isArray(a) || Array.isArray(b)) throw badKey(ctx, Array.isArray(a) ? "Idempotency-Key" : "x-mg-idempotency-key", "Send one idempotency key, not several");
  const header = a !== undefined ? "Idempotency-Key" : "x-mg-idempotency-key";
  const key = (a ?? b)?.trim();
  if (key === undefined) return undefined;
  if (b !== undefined && !isId(b.trim())) throw badKey(ctx, "x-mg-idempotency-key", `x-mg-idempotency-key must be a ULID or a UUID, got ${JSON.stringify(b.trim().slice(0, 64))}`);
  if (!FREE_FORM.test(key)) {
    throw badKey(ctx, header, `${header} must be 1 to 255 visible ASCII characters (no spaces), got ${JSON.stringify(key.slice(0, 64))}${key.length > 64 ? "…" : ""}`);
  }
  if (a !== undefined && b !== undefined && canonical(a.trim()) !== canonical(b.trim())) {
    throw badKey(ctx, "Idempotency-Key", "Idempotency-Key and x-mg-idempotency-key differ; send one of them");
  }
  return canonical(key);
}

/**
 * The key as the client spelled it (a ULID in upper case stays so), for answers that name it back: a client matching
 * the key it sent by string finds it. Compare and store idempotencyKey's form, never this one.
 */
export function idempotencyKeyAsSent(ctx: GatewayContext): string | undefined {
  const sent = ctx.headers["idempotency-key"] ?? ctx.headers["x-mg-idempotency-key"];
  return typeof sent === "string" ? sent.trim() : undefined;
}

/**
 * Where a key's record lives in the store: the project, the endpoint and the key, and for a sandbox key a space of
 * its own. Sandbox answers come from the simulator and cost nothing; a live key must never be handed one (nor a
 * sandbox key a live answer). `sandbox` is no endpoint name and project ids have no `:`, so no two scopes meet.
 */
export function idempotencyScope(projectId: string, endpoint: string, key: string, sandbox: boolean): string {
  return sandbox ? `${projectId}:sandbox:${endpoint}:${key}` : `${projectId}:${endpoint}:${key}`;
}
