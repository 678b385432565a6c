// Gemini error bodies: {"error":{"code","message","status","details":[{"@type":"…RetryInfo","retryDelay":"34.4s"}]}}.
// The generic mapping gives 502/504 with the provider's message; RetryInfo becomes Retry-After.
import { GatewayError, googleStatus } from "../../../core/errors.ts";
import { failFromResponse, type UpstreamResponse } from "../../http.ts";
import { inBandError } from "../../in-band-error.ts";

export function retryDelaySeconds(error: any): number | undefined {
  for (const d of Array.isArray(error?.details) ? error.details : []) {
    if (typeof d?.["@type"] === "string" && d["@type"].endsWith("RetryInfo")) {
      const s = Number.parseFloat(String(d.retryDelay));
      if (Number.isFinite(s)) return s;
    }
  }
  return undefined;
}

export async function geminiFailure(provider: string, res: UpstreamResponse): Promise<GatewayError> {
  const err = await failFromResponse(provider, res);
  const upstream = err.details?.upstream_error as any;
  const delay = err.retryAfter ?? retryDelaySeconds(upstream);
  if (delay === err.retryAfter) return err;
  return new GatewayError(err.status, err.code, err.message, { details: err.details, retryable: err.retryable, retryAfter: delay, headers: err.headers });
}

/** The statuses whose google.rpc names googleStatus gives, in the order a bare name is matched. */
const STATUSES = [400, 401, 429, 403, 404, 501, 504, 409, 499, 503, 500];

/**
 * A Gemini stream event carrying `error` (`{code, message, status, details}`, as its HTTP error body) -> the gateway
 * error, judged as that error sent as its HTTP status (providers/in-band-error.ts): INVALID_ARGUMENT is the client's
 * 400, never retried; UNAVAILABLE, INTERNAL, RESOURCE_EXHAUSTED (its RetryInfo the wait) stay retryable.
 */
export function geminiStreamError(provider: string, error: any): GatewayError {
  const code = Number(error?.code);
  const status = code >= 400 && code < 600 ? code : STATUSES.find((s) => googleStatus(s) === error?.status) ?? 500;
  return inBandError(provider, status, error, retryDelaySeconds(error));
}
