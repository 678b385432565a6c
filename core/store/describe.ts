// Which store a config runs on and where, as `check` and `start` print it. An operator who left `store:` out learns
// that the SQLite file beside the config keeps spend, ledger and keys (and which file); one who chose memory, that
// nothing survives a restart. Credentials in a Redis or Postgres URL are left out.
import type { StoreConfig } from "../generated/types/gateway.ts";
import { sqlitePathOf } from "./index.ts";
import { where } from "./spool-tag.ts";

/** `configured`: the config file has a `store:` section (else this is the default, and the text says so). */
export function describeStore(store: StoreConfig, dir: string, configured: boolean): string {
  const kept = store.kind === "sqlite" ? `sqlite ${sqlitePathOf(store, dir)}`
    : store.kind === "redis" ? `redis ${where(store.url ?? "", 6379, "0")}${store.prefix ? ` (prefix ${store.prefix})` : ""}`
    : "memory (spend, ledger and API-created keys are lost on exit)";
  const ledger = store.ledger?.kind === "postgres" ? `, ledger postgres ${where(store.ledger.url ?? "", 5432, "")}` : "";
  return `${kept}${ledger}${configured ? "" : " (the default: the config has no store: section)"}`;
}
