// The two core steps every pipeline gets: body validation (after auth) and the endpoint's terminal.
import type { GatewayContext } from "../pipeline/context.ts";
import type { Next } from "../pipeline/define.ts";
import { endpointByKind } from "./index.ts";
import { validationError } from "../http/validate.ts";

export async function validateStep(ctx: GatewayContext, next: Next): Promise<void> {
  const spec = endpointByKind.get(ctx.endpoint);
  if (spec?.validate && !spec.validate(ctx.body)) {
    // Messages clients (Claude Code, the Anthropic SDK) read the Messages API's own wording.
    throw validationError(spec.validate, spec.invalidCode ?? "INVALID_REQUEST", spec.protocol === "anthropic" ? "anthropic" : "gateway");
  }
  return next();
}

export function runTerminal(ctx: GatewayContext): Promise<void> {
  return endpointByKind.get(ctx.endpoint)!.terminal(ctx);
}
