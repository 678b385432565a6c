// Gemini error bodies: {"error":{"code","message","status","details":[{"@type":"…RetryInfo","retryDelay":"34.4s"}]}}.
// The generic mapping gives 502/504 with the provider's message; RetryInfo becomes Retry-After.
import { GatewayError } from "../../../core/errors.ts";
import { failFromResponse, type UpstreamResponse } from "../../http.ts";

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
