// The caller's W3C `traceparent` (https://www.w3.org/TR/trace-context/#traceparent-header), read without the
// OpenTelemetry packages so access lines join the caller's trace with tracing off. A header that breaks a rule is
// ignored as the spec says (a new trace), never half-used: an all-zero trace id put in every such caller's access
// line would join unrelated requests into one "trace".

const FIELDS = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})/;
/** Version 00 is exactly this long; a later version may append fields after a `-`. */
const V00_LENGTH = 55;

/** The trace id of a valid traceparent, or undefined when there is none or it is invalid. */
export function traceIdOfHeader(header: string | string[] | undefined): string | undefined {
  if (typeof header !== "string") return undefined;
  const m = FIELDS.exec(header);
  if (!m) return undefined; // also upper-case hex, short fields, two headers joined in the wrong place
  const [, version, traceId, parentId] = m as unknown as [string, string, string, string];
  if (version === "ff") return undefined; // forbidden version
  if (version === "00" ? header.length !== V00_LENGTH : header.length > V00_LENGTH && header[V00_LENGTH] !== "-") return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined;
  return traceId;
}
