// server.cors compiled once per config load (and reload): the origins allowed, the request headers accepted, the
// preflight's max age. core/http/cors.ts applies it to each request.
import type { CorsConfig } from "../generated/types/gateway.ts";
import { corsOrigins, type CorsOrigins } from "./cors-origins.ts";
import { CorsHeaders } from "./cors-headers.ts";

export interface CorsPolicy {
  origins: CorsOrigins;
  headers: CorsHeaders;
  /** Access-Control-Max-Age, seconds. */
  maxAge: string;
}

export const DEFAULT_CORS_MAX_AGE_S = 600;

/** server.cors as a policy (undefined: off, as when unset or no origin is listed), and a problem per bad origin. */
export function corsPolicy(config: CorsConfig | undefined): { policy: CorsPolicy | undefined; problems: { index: number; message: string }[] } {
  if (!config?.allow_origins.length) return { policy: undefined, problems: [] };
  const { origins, problems } = corsOrigins(config.allow_origins);
  return {
    policy: { origins, headers: new CorsHeaders(config.allow_headers ?? []), maxAge: String(config.max_age_s ?? DEFAULT_CORS_MAX_AGE_S) },
    problems,
  };
}
