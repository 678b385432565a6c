// The two core steps every pipeline gets: reading and validating the body (after auth) and the endpoint's terminal.
import type { GatewayContext } from "../pipeline/context.ts";
import type { Next } from "../pipeline/define.ts";
import { endpointByKind } from "./index.ts";
import { validationError } from "../http/validate.ts";
import { loadBody } from "../http/deferred-body.ts";

/** Reads the body (only now, after auth) and validates it. */
export async function validateStep(ctx: GatewayContext, next: Next): Promise<void> {
  await loadBody(ctx);
  const spec = endpointByKind.get(ctx.endpoint);
  if (spec?.validate && !spec.validate(ctx.body)) throw validationError(spec.validate, spec.invalidCode ?? "INVALID_REQUEST");
  return next();
}

export function runTerminal(ctx: GatewayContext): Promise<void> {
  return endpointByKind.get(ctx.endpoint)!.terminal(ctx);
}
