// Cheap request-size estimates shared by budget (worst case) and rate-limit (token estimate). The body is
// serialised once per request (cached on the context).
import type { GatewayContext } from "../pipeline/context.ts";

const chars = new WeakMap<GatewayContext, number>();

/**
 * Size of the request body: an upper bound on its input tokens (a token is at least one character). The bytes the
 * client sent (Content-Length, never fewer than the characters) when known, else the serialised body.
 */
export function bodyChars(ctx: GatewayContext): number {
  let n = chars.get(ctx);
  if (n === undefined) {
    const declared = Number(ctx.headers["content-length"]);
    n = ctx.body === undefined ? 0 : Number.isSafeInteger(declared) && declared > 0 ? declared : JSON.stringify(ctx.body).length;
    chars.set(ctx, n);
  }
  return n;
}

/** A typical-case input estimate: about four characters per token. */
export const inputEstimate = (ctx: GatewayContext): number => Math.ceil(bodyChars(ctx) / 4);

/**
 * The input billed when the provider reported none: an estimate that errs high — three bytes a token, where text in
 * any script takes more (English ~4.5, code ~3.5, CJK ~3.6 in o200k_base) — of the whole body, JSON included.
 */
export const inputUpperEstimate = (ctx: GatewayContext): number => Math.ceil(bodyChars(ctx) / 3);

/** The output tokens the client asked for at most, or undefined when it left it to the model. */
export function requestedOutput(body: any): number | undefined {
  const max = body?.max_tokens ?? body?.max_completion_tokens ?? body?.max_output_tokens;
  return typeof max === "number" && max > 0 ? Math.ceil(max) * (typeof body?.n === "number" && body.n > 1 ? body.n : 1) : undefined;
}
