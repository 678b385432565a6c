// How the Config view words what gateway.yaml declares: an admin key past its expiry is refused at sign-in, so it
// is marked expired rather than listed as if it worked; a project's key count is of gateway.yaml's keys only (keys
// made through the admin API are on the Keys view), so it says so.
import type { ConfigLoaded } from "./types.ts";
import { when } from "./format.ts";

type AdminKey = ConfigLoaded["admin_keys"][number];

/** "write, expired 2025-01-01 00:00:00", "read, revoked", "write, expires 2027-03-01 00:00:00". */
export function adminKeyNote(k: AdminKey, now = Date.now()): string {
  const expiry = !k.expires_at ? "" : Date.parse(k.expires_at) <= now ? `, expired ${when(k.expires_at)}` : `, expires ${when(k.expires_at)}`;
  return `${k.scope}${k.revoked ? ", revoked" : ""}${expiry}`;
}

/** "1 key in gateway.yaml", "3 keys in gateway.yaml". */
export const yamlKeys = (n: number): string => `${n} ${n === 1 ? "key" : "keys"} in gateway.yaml`;
