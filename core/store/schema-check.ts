// `model-gateway check`: is the configured store one a newer release wrote (schema-version.ts)? Read only — the
// check creates and migrates nothing; a store it cannot reach is left to the other checks (and to start).
import Database from "better-sqlite3";
import { existsSync, readFileSync } from "node:fs";
import type { StoreConfig } from "../generated/types/gateway.ts";
import type { ConfigProblem } from "../config/source.ts";
import { sqlitePathOf } from "./index.ts";
import { sqliteSchemaVersion } from "./sqlite.ts";
import { StoreSchemaError, checkSchemaVersion } from "./schema-version.ts";

/** The problem (at the config's `store:` line) when the store was written by a newer release; undefined otherwise. */
export async function storeSchemaProblem(config: StoreConfig | undefined, configDir: string, configFile: string): Promise<ConfigProblem | undefined> {
  try {
    await checkStore(config, configDir);
    return undefined;
  } catch (err) {
    if (!(err instanceof StoreSchemaError)) return undefined;
    let line = 1;
    try {
      const at = readFileSync(configFile, "utf8").split("\n").findIndex((l) => /^store\s*:/.test(l));
      if (at >= 0) line = at + 1;
    } catch {
      // the file is gone: report line 1
    }
    return { file: configFile, line, column: 1, message: `store (${config?.kind ?? "memory"}): ${err.message}` };
  }
}

async function checkStore(config: StoreConfig | undefined, configDir: string): Promise<void> {
  if (config?.kind === "sqlite") {
    const path = sqlitePathOf(config, configDir);
    if (path === ":memory:" || !existsSync(path)) return;
    const db = new Database(path, { readonly: true, fileMustExist: true, timeout: 2_000 });
    try {
      sqliteSchemaVersion(db, path);
    } finally {
      db.close();
    }
    return;
  }
  if (config?.kind !== "redis" || !config.url) return;
  // RedisStore.connect refuses a newer release's keys itself.
  const { RedisStore } = await import("./redis.ts");
  const redis = await RedisStore.connect(config.url, config.prefix ?? "mg:", { commandTimeoutMs: 2_000 });
  await redis.close();
  if (config.ledger?.kind !== "postgres" || !config.ledger.url) return;
  const pg = (await import("pg")).default;
  const client = new pg.Client({ connectionString: config.ledger.url, connectionTimeoutMillis: 5_000, statement_timeout: 5_000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ meta: boolean }>("SELECT to_regclass('mg_meta') IS NOT NULL AS meta");
    if (!rows[0]?.meta) return;
    const v = await client.query<{ value: string }>("SELECT value FROM mg_meta WHERE name = 'schema_version'");
    checkSchemaVersion("postgres", "the ledger in this database", v.rows[0]?.value);
  } finally {
    await client.end().catch(() => {});
  }
}
