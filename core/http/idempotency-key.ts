// The idempotency key a client sent (`Idempotency-Key` or `x-mg-idempotency-key`, a ULID or UUID), validated.
// In core because two places read it: the idempotency plugin, and the videos endpoint (a key names the job).
import { GatewayError } from "../errors.ts";
import type { GatewayContext } from "../pipeline/context.ts";

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function badKey(ctx: GatewayContext, header: string, message: string): GatewayError {
  const code = ctx.endpoint === "images" || ctx.endpoint === "videos" || ctx.endpoint === "rerank" ? "BAD_REQUEST" : "INVALID_REQUEST";
  return new GatewayError(400, code, message, { details: { field: header } });
}

/** The key the client sent, validated; undefined when it sent none. */
export function idempotencyKey(ctx: GatewayContext): string | undefined {
  const a = ctx.headers["idempotency-key"];
  const b = ctx.headers["x-mg-idempotency-key"];
  if (Array.isArray(a) || Array.isArray(b)) throw badKey(ctx, Array.isArray(a) ? "Idempotency-Key" : "x-mg-idempotency-key", "Send one idempotency key, not several");
  if (a !== undefined && b !== undefined && a.trim().toLowerCase() !== b.trim().toLowerCase()) {
    throw badKey(ctx, "Idempotency-Key", "Idempotency-Key and x-mg-idempotency-key differ; send one of them");
  }
  const header = a !== undefined ? "Idempotency-Key" : "x-mg-idempotency-key";
  const key = (a ?? b)?.trim();
  if (key === undefined) return undefined;
  if (!ULID.test(key) && !UUID.test(key)) throw badKey(ctx, header, `${header} must be a ULID or a UUID, got ${JSON.stringify(key.slice(0, 64))}`);
  return key.toLowerCase();
}
