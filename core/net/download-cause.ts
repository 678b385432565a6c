// A client-URL download that could not be connected to is told to the client only as "<field> could not be
// downloaded" (core/net/url-fetch.ts: the connection error would map an allowed host's ports). The operator still
// needs the reason (a refused port, a reset, a certificate the gateway does not trust): the request's access line
// carries it, by this function.

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
