// Store settings that belong to one kind: a `path` on a memory store (which keeps nothing on disk whatever it says),
// a Redis `url` on SQLite, were accepted and never read, so the operator believed them in force. Refused at load,
// naming the kind they belong to, as a provider's fields of another protocol are (provider-fields-check.ts). (A
// Postgres `ledger` without kind: redis is the schema's own refusal.)
// One file may serve deployments of different kinds: `kind: "${STORE_KIND:-sqlite}"` with both kinds' settings
// written in, or a `prefix: "${REDIS_PREFIX:-mg:}"` some deployments set. When kind or the setting comes from a
// variable, the unread setting is a note, not a refusal: such a file ran before this check and is no typo.
import type { GatewayConfig, StoreConfig } from "../generated/types/gateway.ts";
import { hasReference } from "./env.ts";
import type { ConfigProblem } from "./source.ts";

type At = (path: (string | number)[], message: string, atKey?: boolean) => ConfigProblem;
type Kind = StoreConfig["kind"];
/** `store:` as written in the file, its `${...}` references not yet expanded. */
export type WrittenStore = Readonly<Record<string, unknown>> | undefined;

/** Each kind-bound field -> the store kinds that read it. The others (timeouts, spool_dir...) every kind reads. */
const OWNERS: Partial<Record<keyof StoreConfig, readonly Kind[]>> = {
  path: ["sqlite"],
  fsync: ["sqlite"],
  integrity_check: ["sqlite"],
  url: ["redis"],
  prefix: ["redis"],
};

interface Unread {
  field: keyof StoreConfig;
  owners: readonly Kind[];
  /** The `${...}` text that makes it a note (kind's, else the setting's), or undefined for a refusal. */
  variable?: string;
}

const reference = (v: unknown) => (typeof v === "string" && hasReference(v) ? v : undefined);

/** Each store setting the configured kind never reads. */
function unreadSettings(config: GatewayConfig, written: WrittenStore): Unread[] {
  const store = config.store;
  if (!store) return [];
  const out: Unread[] = [];
  for (const field of Object.keys(store) as (keyof StoreConfig)[]) {
    const owners = OWNERS[field];
    // "" (a ${VAR:-} whose variable is unset or empty) is no setting, as for a provider's fields.
    if (!owners || store[field] === undefined || store[field] === "" || owners.includes(store.kind)) continue;
    out.push({ field, owners, variable: reference(written?.kind) ?? reference(written?.[field]) });
  }
  return out;
}

export function checkStoreFields(config: GatewayConfig, written: WrittenStore, at: At, problems: ConfigProblem[]): void {
  const kind = config.store?.kind;
  for (const { field, owners, variable } of unreadSettings(config, written)) {
    if (variable !== undefined) continue;
    const memory = kind === "memory" ? " (a memory store keeps nothing: everything is lost on exit)" : "";
    problems.push(at(["store", field],
      `store.${field}: a setting of store kind ${owners.join(" or ")}, not ${kind}: this store would never read it${memory} (remove it, or fix kind)`, true));
  }
}

/** A note per unread setting that a `${...}` kind or value makes deliberate (checkStoreFields refuses the others). */
export function storeFieldNotices(config: GatewayConfig, written: WrittenStore): string[] {
  const kind = config.store?.kind;
  return unreadSettings(config, written).flatMap(({ field, owners, variable }) => {
    if (variable === undefined) return [];
    const source = reference(written?.kind) !== undefined ? `store.kind comes from ${variable}` : `it comes from ${variable}`;
    return [`store.${field}: a setting of store kind ${owners.join(" or ")}, not read while store.kind is ${kind} (taken, as ${source})`];
  });
}
