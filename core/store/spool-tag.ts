// The tag a spool's file names carry for the store its records are for (spool-identity.ts says why): a kind and a
// hash of where the store is, credentials left out. Apart from spool-identity.ts so the Postgres ledger can name its
// own spool without importing the store factory.
import { createHash } from "node:crypto";

/** The tag of the Postgres ledger's own spool: the database it writes to. */
export function postgresSpoolTag(url: string): string {
  return spoolTag("pg", where(url, 5432, ""));
}

/** <kind>-<12 hex of the target's hash>. */
export const spoolTag = (kind: string, target: string) => `${kind}-${createHash("sha256").update(target).digest("hex").slice(0, 12)}`;

/** host:port/db of a URL, without user or password (a socket host given as ?host= counts too). */
export function where(url: string, defaultPort: number, defaultDb: string): string {
  try {
    const u = new URL(url);
    const host = u.searchParams.get("host") ?? u.hostname;
    const port = u.searchParams.get("port") ?? (u.port || String(defaultPort));
    const db = u.pathname.replace(/^\//, "") || u.searchParams.get("dbname") || u.searchParams.get("db") || defaultDb;
    return `${host.toLowerCase()}:${port}/${db}`;
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//");
  }
}
