// Store settings that belong to one kind: a `path` on a memory store (which keeps nothing on disk whatever it says),
// a Redis `url` on SQLite, were accepted and never read, so the operator believed them in force. Refused at load,
// naming the kind they belong to, as a provider's fields of another protocol are (provider-fields-check.ts). (A
// Postgres `ledger` without kind: redis is the schema's own refusal.)
import type { GatewayConfig, StoreConfig } from "../generated/types/gateway.ts";
import type { ConfigProblem } from "./source.ts";

type At = (path: (string | number)[], message: string, atKey?: boolean) => ConfigProblem;
type Kind = StoreConfig["kind"];

/** Each kind-bound field -> the store kinds that read it. The others (timeouts, spool_dir...) every kind reads. */
const OWNERS: Partial<Record<keyof StoreConfig, readonly Kind[]>> = {
  path: ["sqlite"],
  fsync: ["sqlite"],
  integrity_check: ["sqlite"],
  url: ["redis"],
  prefix: ["redis"],
};

export function checkStoreFields(config: GatewayConfig, at: At, problems: ConfigProblem[]): void {
  const store = config.store;
  if (!store) return;
  for (const field of Object.keys(store) as (keyof StoreConfig)[]) {
    const owners = OWNERS[field];
    // "" (a ${VAR:-} whose variable is unset or empty) is no setting, as for a provider's fields.
    if (!owners || store[field] === undefined || store[field] === "" || owners.includes(store.kind)) continue;
    const memory = store.kind === "memory" ? " (a memory store keeps nothing: everything is lost on exit)" : "";
    problems.push(at(["store", field],
      `store.${field}: a setting of store kind ${owners.join(" or ")}, not ${store.kind}: this store would never read it${memory} (remove it, or fix kind)`, true));
  }
}
