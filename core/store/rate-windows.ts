// The rate windows a request is charged against, by name: per key (the key's own rate_limits, else the project's)
// and per project (project_rate_limits). One place for the names, which the rate-limit plugin charges and the
// admin API reads.
import type { RateLimits } from "../generated/types/gateway.ts";

export interface RateWindow {
  key: string;
  limit: number;
  /** A token window (tpm); else a request window (rpm). */
  token: boolean;
  scope: "key" | "project";
}

export function rateWindows(projectId: string, keyId: string | undefined, perKey: RateLimits | undefined, perProject: RateLimits | undefined): RateWindow[] {
  const out: RateWindow[] = [];
  const add = (key: string, limit: number | undefined, token: boolean, scope: RateWindow["scope"]) => {
    if (limit) out.push({ key, limit, token, scope });
  };
  if (keyId !== undefined) {
    add(`key:${projectId}:${keyId}:rpm`, perKey?.rpm, false, "key");
    add(`key:${projectId}:${keyId}:tpm`, perKey?.tpm, true, "key");
  }
  add(`project:${projectId}:rpm`, perProject?.rpm, false, "project");
  add(`project:${projectId}:tpm`, perProject?.tpm, true, "project");
  return out;
}
