// What the downloads of one inlineUrls call (one attempt of one client request) may add up to, counted chunk by
// chunk as they arrive over the downloads running side by side: the request's own total (too_large_total, a 400
// naming the field whose bytes passed it) and the process's bytes in flight (server.url_fetch.max_bytes_in_flight,
// counted as the base64 the bytes become; one project at most half of it): past either, a 429 to retry shortly.
// What this request took from the process is given back when the request ends (its attempts send the bytes until
// then, and keep them for retries and fallbacks), or at once when its downloads failed; a caller whose signal is
// not a client request's (a test's, a job's) gives it back when its downloads are over.
import { GatewayError, invalidRequest } from "../../../core/errors.ts";
import { clientDownloads, DEFAULT_MAX_BYTES_IN_FLIGHT, projectShare, type Refusal } from "../../../core/net/download-pool.ts";
import { requestOf } from "../../../core/net/request-abort.ts";
import type { UrlFetchPolicy } from "../../../core/net/url-fetch.ts";

/** Seconds a client is told to wait when the process is busy downloading: downloads take seconds, not minutes. */
const BUSY_RETRY_AFTER_S = 2;

/** What `bytes` downloaded bytes are held as: base64, 4 characters for every 3 bytes. */
export const base64Size = (bytes: number) => Math.ceil(bytes / 3) * 4;

export interface RequestBudget {
  /** The counter one download charges its chunks to (its field named in a refusal). */
  charge(field: string): (bytes: number) => GatewayError | undefined;
  /**
   * The downloads are over; later chunks (a download still stopping) are refused. `kept`: the request holds their
   * bytes from now on, so what was taken goes back when it ends; else (they failed) it goes back now.
   */
  close(kept: boolean): void;
}

function busy(field: string, why: Refusal, inFlight: number): GatewayError {
  const setting = "server.url_fetch.max_bytes_in_flight";
  const message = why === "pool"
    ? `${field} could not be downloaded now: the gateway is holding as many media-URL downloads as ${setting} allows (${inFlight} bytes); retry shortly`
    : `${field} could not be downloaded now: this project's requests hold half of ${setting} (${projectShare(inFlight)} of ${inFlight} bytes) in media-URL downloads, a project's most; retry shortly`;
  return new GatewayError(429, "RATE_LIMITED", message, {
    retryAfter: BUSY_RETRY_AFTER_S, retryable: false,
    details: { field, reason: why === "pool" ? "downloads_busy" : "project_downloads_busy", setting, max_bytes_in_flight: inFlight },
  });
}

export function requestBudget(maxTotal: number, policy: UrlFetchPolicy, upstream: string, signal?: AbortSignal): RequestBudget {
  const inFlight = policy.maxBytesInFlight ?? DEFAULT_MAX_BYTES_IN_FLIGHT;
  const request = requestOf(signal);
  const project = request?.owner?.();
  let total = 0;
  let held = 0;
  let closed = false;
  const giveBack = () => {
    clientDownloads.giveBack(held, project);
    held = 0;
  };
  return {
    charge: (field) => (bytes) => {
      if (closed) return new GatewayError(499, "CANCELLED", "The request's downloads were stopped");
      total += bytes;
      if (total > maxTotal) {
        return invalidRequest(`${field}: the media URLs of one request may download at most ${maxTotal} bytes in all for ${upstream}`, field, { reason: "too_large_total", max_bytes: maxTotal });
      }
      // The pool counts the base64 the bytes become, which is what the request then holds.
      const more = base64Size(total) - held;
      const refused = clientDownloads.take(more, inFlight, project);
      if (refused) return busy(field, refused, inFlight);
      held += more;
      return undefined;
    },
    close: (kept) => {
      if (closed) return;
      closed = true;
      if (kept && request) request.onEnd(giveBack);
      else giveBack();
    },
  };
}
