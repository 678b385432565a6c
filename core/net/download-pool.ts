// Bytes this process holds for client-URL downloads still running (images inlined for Gemini, Claude on Bedrock and
// Vertex, Bedrock Converse: providers/translate/chat-to-gemini/media-urls.ts), across every request and tenant.
// Each request is held to its own total; this bound is what keeps many such requests at once from holding
// gigabytes (server.url_fetch.max_bytes_in_flight). Per process: `start --workers N` has N of them.

/** server.url_fetch.max_bytes_in_flight's default: a dozen requests downloading their full 20 MiB at once. */
export const DEFAULT_MAX_BYTES_IN_FLIGHT = 256 * 1024 * 1024;

export class DownloadPool {
  private used = 0;

  /** Bytes taken and not yet given back. */
  get inFlight(): number {
    return this.used;
  }

  /** Takes n bytes when the sum stays within limit; false (nothing taken) when it would pass it. */
  take(n: number, limit: number): boolean {
    if (this.used + n > limit) return false;
    this.used += n;
    return true;
  }

  giveBack(n: number): void {
    this.used = Math.max(0, this.used - n);
  }
}

/** The process's one pool for client-URL downloads. */
export const clientDownloads = new DownloadPool();
