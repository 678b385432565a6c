// The secrets a config holds: every value the gateway sends upstream as a credential (providers' and projects'
// BYOK keys, AWS credentials, credential-like headers, secrets inside a base_url) and the few it keeps for itself
// (the URL-signing secret, the metrics bearer token, the OTLP collector's headers and URL password, the Redis password,
// the egress proxy's password).
import type { GatewayConfig, ProviderConfig } from "../generated/types/gateway.ts";

type Env = Record<string, string | undefined>;

/** Header names whose value is a credential (custom auth headers included). */
const CREDENTIAL_HEADER = /auth|key|token|secret|sig|cookie|session|pass|cred/i;

/** Password and query values of a URL (`https://user:pass@host/v1?key=...`): sent upstream as they are. */
function urlSecrets(url: string | undefined, out: string[]): void {
  if (typeof url !== "string") return;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return;
  }
  if (u.password) out.push(decoded(u.password));
  for (const [, v] of u.searchParams) out.push(v);
}

/** A password as sent; one with a % that starts no %XX escape (`50%off`) as written: masked, never a crash here. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function providerSecrets(pc: Partial<ProviderConfig>, out: string[]): void {
  for (const k of ["api_key", "aws_access_key_id", "aws_secret_access_key", "aws_session_token"] as const) {
    const v = pc[k];
    if (typeof v === "string") out.push(v);
  }
  for (const [name, v] of Object.entries(pc.headers ?? {})) if (typeof v === "string" && CREDENTIAL_HEADER.test(name)) out.push(v);
  urlSecrets(pc.base_url, out);
}

export function configSecrets(config: GatewayConfig, env: Env): string[] {
  const out: string[] = [];
  for (const pc of Object.values(config.providers ?? {})) {
    providerSecrets(pc, out);
    // Bedrock falls back on the AWS environment (providers/bedrock/auth.ts).
    if (pc.protocol === "bedrock") {
      for (const name of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"]) {
        const v = env[name];
        if (v) out.push(v);
      }
    }
  }
  for (const p of Object.values(config.projects ?? {})) {
    for (const byok of Object.values(p.providers ?? {})) providerSecrets(byok as Partial<ProviderConfig>, out);
  }
  // MCP servers: credential-like headers, every env value handed to a local server, secrets inside the URL.
  const mcpSecrets = (m: { headers?: Record<string, string>; env?: Record<string, string>; url?: string }) => {
    for (const [name, v] of Object.entries(m.headers ?? {})) if (typeof v === "string" && CREDENTIAL_HEADER.test(name)) out.push(v);
    for (const [name, v] of Object.entries(m.env ?? {})) if (typeof v === "string" && CREDENTIAL_HEADER.test(name)) out.push(v);
    urlSecrets(m.url, out);
  };
  for (const m of Object.values(config.mcp_servers ?? {})) mcpSecrets(m);
  for (const p of Object.values(config.projects ?? {})) for (const m of Object.values(p.mcp?.servers ?? {})) mcpSecrets(m);
  if (typeof config.server?.signing_secret === "string") out.push(config.server.signing_secret);
  if (typeof config.metrics?.token === "string") out.push(config.metrics.token);
  urlSecrets(config.store?.url, out);
  for (const v of Object.values(config.telemetry?.otlp?.headers ?? {})) if (typeof v === "string") out.push(v);
  // The collector's URL may carry a password (https://user:pass@otel/), from the config or the OTLP variables.
  urlSecrets(config.telemetry?.otlp?.endpoint, out);
  urlSecrets(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, out);
  urlSecrets(env.OTEL_EXPORTER_OTLP_ENDPOINT, out);
  // The egress proxy's password (server.egress_proxy.url, else the proxy variables): never echoed back, never logged.
  // A present egress_proxy (even {}) decides alone: the variables are not the gateway's then (core/net/egress-proxy.ts).
  if (config.server?.egress_proxy) urlSecrets(config.server.egress_proxy.url, out);
  else for (const name of ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"]) urlSecrets(env[name], out);
  return out.filter((s) => s.length > 0);
}
