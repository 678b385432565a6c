// What the downloads of one inlineUrls call (one attempt of one client request) may add up to, counted chunk by
// chunk as they arrive over the downloads running side by side: the request's own total (too_large_total, a 400
// naming the field whose bytes passed it) and the process's bytes in flight (server.url_fetch.max_bytes_in_flight,
// a 429 to retry shortly). What this request took from the process is given back when its downloads are over.
import { GatewayError, invalidRequest } from "../../../core/errors.ts";
import { clientDownloads, DEFAULT_MAX_BYTES_IN_FLIGHT } from "../../../core/net/download-pool.ts";
import type { UrlFetchPolicy } from "../../../core/net/url-fetch.ts";

/** Seconds a client is told to wait when the process is busy downloading: downloads take seconds, not minutes. */
const BUSY_RETRY_AFTER_S = 2;

export interface RequestBudget {
  /** The counter one download charges its chunks to (its field named in a refusal). */
  charge(field: string): (bytes: number) => GatewayError | undefined;
  /** Gives back what was taken from the process; later chunks (a download still stopping) are refused. */
  close(): void;
}

export function requestBudget(maxTotal: number, policy: UrlFetchPolicy, upstream: string): RequestBudget {
  const inFlight = policy.maxBytesInFlight ?? DEFAULT_MAX_BYTES_IN_FLIGHT;
  let total = 0;
  let held = 0;
  let closed = false;
  return {
    charge: (field) => (bytes) => {
      if (closed) return new GatewayError(499, "CANCELLED", "The request's downloads were stopped");
      total += bytes;
      if (total > maxTotal) {
        return invalidRequest(`${field}: the media URLs of one request may download at most ${maxTotal} bytes in all for ${upstream}`, field, { reason: "too_large_total", max_bytes: maxTotal });
      }
      if (!clientDownloads.take(bytes, inFlight)) {
        return new GatewayError(429, "RATE_LIMITED", `${field} could not be downloaded now: the gateway is holding as many media-URL downloads as server.url_fetch.max_bytes_in_flight allows (${inFlight} bytes); retry shortly`, {
          retryAfter: BUSY_RETRY_AFTER_S, retryable: false, details: { field, reason: "downloads_busy", setting: "server.url_fetch.max_bytes_in_flight", max_bytes_in_flight: inFlight },
        });
      }
      held += bytes;
      return undefined;
    },
    close: () => {
      if (closed) return;
      closed = true;
      clientDownloads.giveBack(held);
      held = 0;
    },
  };
}
