// Whether traces are exported, and where: read before the OpenTelemetry packages are loaded (tracing.ts), which
// happens only when this answers a target (~3 MB of heap per process otherwise).

export interface TelemetryOptions {
  service_name?: string;
  otlp?: { endpoint?: string; headers?: Record<string, string> };
}

/**
 * Where spans go: telemetry.otlp.endpoint, else the standard OTEL_EXPORTER_OTLP_* variables; undefined = off. `from`
 * names the setting the URL came from, for an error about it.
 */
export function otlpTarget(t: TelemetryOptions | undefined, env: NodeJS.ProcessEnv = process.env): { url: string; headers: Record<string, string>; from: string } | undefined {
  const base = t?.otlp?.endpoint;
  const tracesUrl = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const anyUrl = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  let url: string | undefined;
  let from = "";
  if (base) [url, from] = [/\/v1\/traces\/?$/.test(base) ? base : `${base.replace(/\/+$/, "")}/v1/traces`, "telemetry.otlp.endpoint"];
  else if (tracesUrl) [url, from] = [tracesUrl, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"];
  else if (anyUrl) [url, from] = [`${anyUrl.replace(/\/+$/, "")}/v1/traces`, "OTEL_EXPORTER_OTLP_ENDPOINT"];
  if (!url) return undefined;
  const headers = { ...parseHeaderList(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseHeaderList(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS), ...t?.otlp?.headers };
  return { url, headers, from };
}

/** `k1=v1,k2=v2` (values URL-encoded), the OTEL_EXPORTER_OTLP_HEADERS format. */
function parseHeaderList(s: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of s?.split(",") ?? []) {
    const eq = part.indexOf("=");
    if (eq > 0) out[decoded(part.slice(0, eq).trim())] = decoded(part.slice(eq + 1).trim());
  }
  return out;
}

/** A URL-encoded part, or as written when a % in it starts no escape: a token with a bare % must not stop the start. */
function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The URL as it may be shown: a password (and user) inside it is a credential (docs/security.md). */
export function withoutUserinfo(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = "";
    u.password = "";
    return u.toString();
  } catch {
    return url.replace(/\/\/[^/@]*@/, "//");
  }
}
