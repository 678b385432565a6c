// A client-URL download that could not be connected to is told to the client only as "<field> could not be
// downloaded" (core/net/url-fetch.ts: the connection error would map an allowed host's ports). The operator still
// needs the reason (a refused port, a reset, a certificate the gateway does not trust): the request's access line
// carries it, and a warning with the request id says it whether or not the access log is on.
import type { Logger } from "../log.ts";

/** The connection error behind a refused download (`connect ECONNREFUSED 127.0.0.1:9 (ECONNREFUSED)`), or undefined. */
export function hiddenDownloadCause(err: unknown): string | undefined {
  const e = err as { details?: Record<string, unknown>; cause?: unknown } | undefined;
  if (e?.details?.reason !== "unreachable" || e.cause === undefined) return undefined;
  const cause = e.cause as { message?: unknown; code?: unknown; cause?: unknown };
  const text = typeof cause?.message === "string" ? cause.message : String(cause);
  const code = typeof cause?.code === "string" && !text.includes(cause.code) ? ` (${cause.code})` : "";
  // undici wraps the socket's error ("fetch failed", "other side closed"): the inner one says why.
  const inner = (cause?.cause as { message?: unknown } | undefined)?.message;
  return `${text}${code}${typeof inner === "string" && inner !== text ? `: ${inner}` : ""}`.slice(0, 500);
}

/**
 * The operator's warning for such a download, whether or not the access log is on (it may be off: the cause was
 * then written nowhere). Nothing for a refusal the client was told in full.
 */
export function warnDownloadCause(log: Pick<Logger, "warn">, err: unknown, request: { requestId: string; project?: string }): void {
  const cause = hiddenDownloadCause(err);
  if (!cause) return;
  const field = (err as { details?: { field?: unknown } }).details?.field;
  log.warn("client media URL could not be downloaded", { requestId: request.requestId, ...(request.project ? { project: request.project } : {}), field, cause });
}
