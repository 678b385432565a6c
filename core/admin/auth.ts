// Admin API authentication: `Authorization: Bearer mg_admin_…`, a key declared under admin_keys in gateway.yaml
// (by sha256, compared in constant time), with a scope: read (every GET) or write (also the changes). Project keys
// are never accepted here, and admin keys never on the public API (their prefix is not a project key's).
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { GatewayError } from "../errors.ts";
import { ADMIN_KEY_PATTERN, KEY_PATTERN } from "../keys/keys.ts";
import type { AdminKeyRuntime, RuntimeConfig } from "../config/runtime.ts";

export type AdminScope = "read" | "write";

const deny = (message: string) => new GatewayError(401, "INVALID_API_KEY", message);

export function authenticateAdmin(config: RuntimeConfig, headers: IncomingHttpHeaders, now = Date.now()): AdminKeyRuntime {
  const h = headers.authorization;
  const key = typeof h === "string" && h.slice(0, 7).toLowerCase() === "bearer " ? h.slice(7).trim() : undefined;
  if (!key) throw deny("Missing admin key: send Authorization: Bearer mg_admin_…");
  if (KEY_PATTERN.test(key)) throw deny("Project keys cannot use the admin API: send an admin key (admin_keys in gateway.yaml)");
  if (!ADMIN_KEY_PATTERN.test(key)) throw deny("Malformed admin key: admin keys start with mg_admin_");
  if (!config.adminKeys.size) throw deny("No admin keys are configured: add admin_keys to gateway.yaml (model-gateway keys new --admin)");
  const digest = createHash("sha256").update(key).digest();
  const record = config.adminKeys.get(digest.toString("hex"));
  if (!record || !timingSafeEqual(record.hash, digest)) throw deny("Unknown admin key");
  if (record.revoked) throw deny("This admin key has been revoked");
  if (record.expiresAt !== null && now >= record.expiresAt) {
    throw new GatewayError(401, "EXPIRED_API_KEY", `This admin key expired at ${new Date(record.expiresAt).toISOString()}`);
  }
  return record;
}

export function requireScope(key: AdminKeyRuntime, scope: AdminScope): void {
  if (scope === "write" && key.scope !== "write") {
    throw new GatewayError(403, "FORBIDDEN", `Admin key ${key.id} has the read scope; this route changes state and needs a write-scope admin key`, {
      details: { admin_key: key.id, scope: key.scope, required: "write" },
    });
  }
}
