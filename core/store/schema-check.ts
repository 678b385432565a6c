// `model-gateway check`: is the configured store one a newer release wrote (schema-version.ts)? Read only — the
// check creates and migrates nothing; a store it cannot reach is left to the other checks (and to start).
import { existsSync } from "node:fs";
import type { StoreConfig } from "../generated/types/gateway.ts";
import type { ConfigProblem } from "../config/source.ts";
import { sqlitePathOf, storeProblem } from "./index.ts";
import { openSqliteReadOnly } from "./sqlite-read-only.ts";
import { StoreSchemaError } from "./schema-version.ts";

/** The problem (at the config's `store:` line) when the store was written by a newer release; undefined otherwise. */
export async function storeSchemaProblem(config: StoreConfig | undefined, configDir: string, configFile: string): Promise<ConfigProblem | undefined> {
  try {
    await checkStore(config, configDir);
    return undefined;
  } catch (err) {
    if (!(err instanceof StoreSchemaError)) return undefined;
    return storeProblem(config, configFile, err.message);
  }
}

async function checkStore(config: StoreConfig | undefined, configDir: string): Promise<void> {
  if (config?.kind === "sqlite") {
    const path = sqlitePathOf(config, configDir);
    if (path === ":memory:" || !existsSync(path)) return;
    openSqliteReadOnly(path, 2_000).close();
    return;
  }
  if (config?.kind !== "redis" || !config.url) return;
  // RedisStore.connect refuses a newer release's keys itself.
  const { RedisStore } = await import("./redis.ts");
  const redis = await RedisStore.connect(config.url, config.prefix ?? "mg:", { commandTimeoutMs: 2_000 });
  await redis.close();
  if (config.ledger?.kind !== "postgres" || !config.ledger.url) return;
  const [pg, { checkPostgresSchema }] = await Promise.all([import("pg").then((m) => m.default), import("./postgres-schema.ts")]);
  const client = new pg.Client({ connectionString: config.ledger.url, connectionTimeoutMillis: 5_000, statement_timeout: 5_000 });
  await client.connect();
  try {
    await checkPostgresSchema(client);
  } finally {
    await client.end().catch(() => {});
  }
}
