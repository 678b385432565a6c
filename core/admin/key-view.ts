// One key as the admin API (and `model-gateway keys list`) shows it, whether declared in gateway.yaml or created
// through the API: source, status, expiry, its own limits, last use. Times are ISO 8601 (UTC), money decimal strings.
import type { ApiKeyConfig } from "../generated/types/gateway.ts";
import type { StoredKey } from "../store/api-keys-types.ts";
import { iso } from "./query.ts";

export type KeyStatus = "active" | "revoked" | "expired";

export interface KeyView {
  project: string;
  id: string;
  source: "yaml" | "api";
  status: KeyStatus;
  name: string | null;
  sandbox: boolean | null;
  /** The key's last four characters (API keys; a YAML key's are unknown to the gateway). */
  hint: string | null;
  created_at: string | null;
  created_by: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  revoked_reason: string | null;
  rate_limits: { rpm?: number; tpm?: number } | null;
  budget: { usd: string; period: string } | null;
  rotated_from: string | null;
  replaced_by: string | null;
  last_used_at: string | null;
}

function statusOf(revoked: boolean, expiresAt: number | null, now: number): KeyStatus {
  if (revoked) return "revoked";
  return expiresAt !== null && now >= expiresAt ? "expired" : "active";
}

export function yamlKeyView(project: string, k: ApiKeyConfig, lastUsed: number | undefined, now: number): KeyView {
  const expiresAt = k.expires_at ? Date.parse(k.expires_at) : null;
  return {
    project, id: k.id, source: "yaml", status: statusOf(k.revoked === true, expiresAt, now), name: null, sandbox: null, hint: null,
    created_at: null, created_by: null, expires_at: iso(expiresAt), revoked_at: null, revoked_reason: null, rate_limits: k.rate_limits ?? null,
    budget: k.budget ? { usd: k.budget.usd, period: k.budget.period ?? "month" } : null, rotated_from: k.rotated_from ?? null, replaced_by: k.replaced_by ?? null,
    last_used_at: iso(lastUsed),
  };
}

export function storedKeyView(k: StoredKey, lastUsed: number | undefined, now: number): KeyView {
  return {
    project: k.project, id: k.id, source: "api", status: statusOf(k.revokedAt !== null, k.expiresAt, now), name: k.name ?? null, sandbox: k.sandbox,
    hint: k.hint, created_at: iso(k.createdAt), created_by: k.createdBy ?? null, expires_at: iso(k.expiresAt), revoked_at: iso(k.revokedAt), revoked_reason: k.revokedReason ?? null,
    rate_limits: k.rateLimits ?? null, budget: k.budget ? { usd: k.budget.usd, period: k.budget.period ?? "month" } : null,
    rotated_from: k.rotatedFrom ?? null, replaced_by: k.replacedBy ?? null, last_used_at: iso(lastUsed),
  };
}
