// Bytes this process holds for client-URL downloads (images inlined for Gemini, Claude on Bedrock and Vertex,
// Bedrock Converse: providers/translate/chat-to-gemini/media-urls.ts), across every request and tenant, from the
// first chunk until the request that downloaded them has ended (its upstream calls, retries and fallbacks all send
// them), counted as the base64 they become. Each request is held to its own total; this bound is what keeps many such
// requests at once from holding gigabytes (server.url_fetch.max_bytes_in_flight). One project holds at most half of
// it, so a tenant whose downloads stall (or whose upstream is slow) cannot starve the others' images. Per process:
// `start --workers N` has N of them.

/** server.url_fetch.max_bytes_in_flight's default: a dozen requests holding their full 20 MiB (as base64) at once. */
export const DEFAULT_MAX_BYTES_IN_FLIGHT = 256 * 1024 * 1024;

/** Why a take was refused: the pool is full, or the project already holds its share of it. */
export type Refusal = "pool" | "project";

/** The most of the pool one project may hold. */
export const projectShare = (limit: number) => Math.floor(limit / 2);

export class DownloadPool {
  private used = 0;
  private readonly byProject = new Map<string, number>();

  /** Bytes taken and not yet given back. */
  get inFlight(): number {
    return this.used;
  }

  /** What `project` holds now. */
  heldBy(project: string): number {
    return this.byProject.get(project) ?? 0;
  }

  /**
   * Takes n bytes for `project` (none: a caller with no project, held only to the pool) when the pool stays within
   * limit and the project within its share; else nothing is taken and the refusal says which bound it would pass.
   */
  take(n: number, limit: number, project?: string): Refusal | undefined {
    if (project !== undefined && this.heldBy(project) + n > projectShare(limit)) return "project";
    if (this.used + n > limit) return "pool";
    this.used += n;
    if (project !== undefined) this.byProject.set(project, this.heldBy(project) + n);
    return undefined;
  }

  giveBack(n: number, project?: string): void {
    this.used = Math.max(0, this.used - n);
    if (project === undefined) return;
    const left = this.heldBy(project) - n;
    if (left > 0) this.byProject.set(project, left);
    else this.byProject.delete(project);
  }
}

/** The process's one pool for client-URL downloads. */
export const clientDownloads = new DownloadPool();
