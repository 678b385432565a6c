// API keys: `mg_live_` / `mg_test_` + 32 url-safe random characters. Only the sha256 is ever stored.
import { createHash, randomBytes } from "node:crypto";

export const KEY_PATTERN = /^mg_(live|test)_[A-Za-z0-9_-]{16,128}$/;

export function newApiKey(sandbox: boolean): string {
  return `mg_${sandbox ? "test" : "live"}_${randomBytes(24).toString("base64url")}`;
}

/** Admin API keys: `mg_admin_` + 32 url-safe random characters; never accepted on the public API. */
export const ADMIN_KEY_PATTERN = /^mg_admin_[A-Za-z0-9_-]{16,128}$/;

export function newAdminKey(): string {
  return `mg_admin_${randomBytes(24).toString("base64url")}`;
}

export const sha256Hex = (key: string) => createHash("sha256").update(key).digest("hex");
