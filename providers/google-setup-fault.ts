// Whether a Google error envelope (Gemini API, Vertex: {"error":{code, message, status, details}}) refuses the
// gateway's own setup rather than the client's request, though it comes as a 400. Google answers an invalid or
// expired API key with 400 INVALID_ARGUMENT whose google.rpc.ErrorInfo reason is API_KEY_INVALID, and a project it
// will not serve (the region it calls from, a free tier not offered there, billing not enabled) with 400
// FAILED_PRECONDITION (Gemini API troubleshooting table). No request the client can change passes either: the
// endpoint is at fault, as on a 401 or 403, and the model's next endpoint may be set up right. Other
// FAILED_PRECONDITION answers can be the client's own (a file it uploaded still processing): only those about the
// location or billing count.

/** google.api.ErrorReason values about the caller's key, project or billing, never about a request's content. */
const SETUP_REASONS: ReadonlySet<string> = new Set([
  "SERVICE_DISABLED", "BILLING_DISABLED", "CONSUMER_INVALID", "CONSUMER_SUSPENDED", "CREDENTIALS_MISSING",
  "ACCESS_TOKEN_EXPIRED", "ACCESS_TOKEN_SCOPE_INSUFFICIENT", "ACCESS_TOKEN_TYPE_UNSUPPORTED", "USER_PROJECT_DENIED",
]);

/** What Google's location and billing preconditions say ("User location is not supported…", "…enable billing…"). */
const SETUP_PRECONDITION = /\blocation is not supported|not available in your (?:country|region)|\bbilling\b/i;

const setupReason = (reason: unknown) => typeof reason === "string" && (reason.startsWith("API_KEY_") || SETUP_REASONS.has(reason));

/** `parsed`: the upstream's error body, parsed. */
export function isGoogleSetupFault(parsed: unknown): boolean {
  const e = (parsed as { error?: { status?: unknown; details?: unknown } } | undefined)?.error;
  if (!e || typeof e !== "object") return false;
  if (e.status === "FAILED_PRECONDITION" && typeof (e as { message?: unknown }).message === "string" && SETUP_PRECONDITION.test((e as { message: string }).message)) return true;
  if (!Array.isArray(e.details)) return false;
  return e.details.some((d: any) => typeof d?.["@type"] === "string" && d["@type"].endsWith("google.rpc.ErrorInfo") && setupReason(d.reason));
}
