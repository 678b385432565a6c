// DELETE /responses/{id} of a response an upstream served natively: that upstream keeps a copy of its own (OpenAI,
// for its own retention), which the client's delete must reach too, with the credentials that made it: the
// project's own key for that provider when the record says it was made with it, else the gateway's. A copy on the
// project's account is never sent to the gateway's (whose answer would be a 404 and the copy left): when the
// project's key is gone, only the gateway's record goes, and that is logged. The gateway's record goes only once the
// upstream's copy is gone (or the upstream says it holds none): a failure is a 502 and the record stays, so the
// client's retry forwards the delete again.
import { DO_NOT_RETRY, GatewayError } from "../errors.ts";
import { byokDriver } from "../byok-drivers.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import type { Target } from "../contracts/provider.ts";
import type { ResponseRecord } from "../store/responses-types.ts";

/** Whether the answer in hand was served with the project's own key (routing gives its target the credentials). */
export function madeWithProjectKey(ctx: GatewayContext): boolean {
  return !!ctx.resolvedTarget?.credentials;
}

/**
 * Deletes the copy at the upstream that served `rec`, cancelled by `signal`; throws what the upstream or the
 * connection threw. Credentials that cannot be used any more (a provider no longer configured, the project's own key
 * removed) cannot reach it: that is logged, and nothing is thrown.
 */
export async function deleteAtUpstream(ctx: GatewayContext, rec: ResponseRecord, signal: AbortSignal): Promise<void> {
  const own = ctx.auth?.project.config.providers?.[rec.provider];
  const byok = own && typeof own.api_key === "string" && own.api_key !== "" ? own : undefined;
  // A record of an earlier release does not say: the project's key when it has one, as routing would have used it.
  const madeWithOwn = rec.projectKey ?? !!byok;
  const log = { requestId: ctx.requestId, response: rec.id, provider: rec.provider };
  if (madeWithOwn && !byok) {
    ctx.gateway.log.warn("deleting a stored response: it was made with the project's own key for its provider, which the project no longer has, so its copy there was not deleted", log);
    return;
  }
  const target: Target = { modelId: rec.model, provider: rec.provider, upstreamModel: "", pricing: {} };
  if (madeWithOwn && byok) {
    target.credentials = { apiKey: byok.api_key, ...(byok.base_url ? { baseUrl: byok.base_url } : {}) };
    if (byok.timeout_ms !== undefined) target.timeoutMs = byok.timeout_ms;
  }
  const driver = ctx.drivers.get(rec.provider) ?? (madeWithOwn ? byokDriver(ctx, rec.provider) : undefined);
  if (!driver?.deleteResponse) {
    // The provider that served it is gone from the config: nothing here can reach its copy any more.
    ctx.gateway.log.warn("deleting a stored response: the provider that served it natively is not configured, so its copy there was not deleted", log);
    return;
  }
  await driver.deleteResponse(rec.id, target, signal);
}

/** The DELETE route's: the upstream's copy first, on the client's request; a failure is a 502 and the record stays. */
export async function deleteUpstreamCopy(ctx: GatewayContext, rec: ResponseRecord): Promise<void> {
  try {
    await deleteAtUpstream(ctx, rec, ctx.signal);
  } catch (e) {
    const cause = e instanceof GatewayError ? e : undefined;
    const retryable = cause?.retryable ?? true;
    throw new GatewayError(502, "UPSTREAM_ERROR", `Response "${rec.id}" was not deleted: deleting the copy provider ${rec.provider} keeps of it failed (${cause?.message ?? String(e)}); it is kept here until that succeeds`, {
      retryable, retryAfter: cause?.retryAfter, ...(retryable ? {} : { headers: DO_NOT_RETRY }), cause: e,
      details: { response_id: rec.id, provider: rec.provider, ...(cause?.details?.upstream_error ? { upstream_error: cause.details.upstream_error } : {}) },
    });
  }
}
