// model-gateway keys list | new | revoke | rotate.
// With --config FILE (or ./gateway.yaml for list, revoke and rotate) the keys of gateway.yaml are edited in place,
// comments and layout kept (yaml-edit.ts); a running gateway picks the change up as it reloads the file.
// With --url URL (and --admin-key or MG_ADMIN_KEY) the command calls that gateway's admin API instead: the keys are
// kept in its store and every replica accepts them at once.
// `keys new` with neither prints the key and the line to paste, as it always did.
import { parseArgs } from "node:util";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { newAdminKey, newApiKey, sha256Hex } from "./keys.ts";
import { parseStrictTime } from "../strict-time.ts";
import { lockedEdit, LockedEditError } from "./locked-edit.ts";
import { addAdminKey, addProjectKey, noteOnProjectKey, setProjectKeyField, yamlKeys, YamlEditError, type Value } from "./yaml-edit.ts";
import { rotationRefusal, successorId } from "./yaml-rotation.ts";
import { rotationNote } from "./rotation-marks.ts";
import { unusedOption } from "./keys-options.ts";
import { ConfigError, formatProblem } from "../config/source.ts";

const USAGE = `Usage:
  model-gateway keys list   [--config F | --url U] [--project P] [--json]
  model-gateway keys new    --project P [--id N] [--sandbox] [--expires DATE] [--rpm N] [--tpm N] [--budget USD] [--budget-period day|week|month|total] [--config F | --url U]
  model-gateway keys new    --admin --scope read|write [--id N] [--expires DATE] [--config F]
  model-gateway keys revoke --project P --id K [--config F | --url U]
  model-gateway keys rotate --project P --id K [--overlap 1h|30m|2d|SECONDS, at most 30d] [--new-id N] [--expires DATE] [--sandbox (--config only)] [--config F | --url U]
  --url U talks to a running gateway's admin API (key from --admin-key or MG_ADMIN_KEY); otherwise gateway.yaml is edited in place.
  rotate --expires: the new key's expiry, not before the retiring key stops working (without it: the retiring key's own expiry, none if it had none).
`;

const OPTIONS = {
  config: { type: "string", short: "c" }, url: { type: "string" }, "admin-key": { type: "string" }, project: { type: "string" }, id: { type: "string" },
  "new-id": { type: "string" }, sandbox: { type: "boolean" }, expires: { type: "string" }, rpm: { type: "string" }, tpm: { type: "string" },
  budget: { type: "string" }, "budget-period": { type: "string" }, overlap: { type: "string" }, admin: { type: "boolean" }, scope: { type: "string" },
  json: { type: "boolean" },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>["values"];

/** The command could not do what was asked (the file, its store or the gateway said no): exit 1. */
class CommandFailed extends Error {}
/** The command line is wrong (a bad value, a missing or unused option): exit 2, as parseArgs's own errors. */
class UsageError extends CommandFailed {}

const SUBCOMMANDS = "list, new, revoke or rotate";
/** The admin API's most for overlap_seconds (schemas/api/admin-key-rotate.schema.json), which --config follows too. */
const MAX_OVERLAP_S = 2_592_000;

const out = (s: string) => process.stdout.write(s);

/** A date still to come (a key that expires on creation is a mistake; no offset: UTC), as gateway.yaml writes it. */
function futureDate(v: string | undefined, flag: string, now = Date.now()): string | undefined {
  if (v === undefined) return undefined;
  const parsed = parseStrictTime(v);
  if (!parsed.ok) throw new UsageError(`${flag} ${v} is not a date: ${parsed.why === "not an ISO 8601 date or time" ? "expected ISO 8601 (2030-01-01, 2030-01-01T12:00:00Z; UTC unless it has an offset)" : parsed.why}`);
  const t = parsed.ms;
  const iso = new Date(t).toISOString().replace(/\.000Z$/, "Z");
  if (t <= now) throw new UsageError(`${flag} ${v} is in the past (${iso}): the key would be expired on creation`);
  return iso;
}

function positiveInt(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a whole number of at least 1 (got ${v})`);
  return n;
}

function overlapSeconds(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const m = /^(\d+)(s|m|h|d)?$/.exec(v);
  if (!m) throw new UsageError(`--overlap ${v}: write 3600, 30m, 1h or 2d`);
  const s = Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? "s") as "s"];
  // Beyond it the API answers 400, and in the file the retiring key's end would be past any date (or no date at all).
  if (!(s <= MAX_OVERLAP_S)) throw new UsageError(`--overlap ${v} is longer than 30 days (${MAX_OVERLAP_S} s), the most the admin API takes`);
  return s;
}

function limitsOf(v: Values) {
  const rpm = positiveInt(v.rpm, "--rpm");
  const tpm = positiveInt(v.tpm, "--tpm");
  if (v.budget !== undefined && !/^(0|[1-9][0-9]*)(\.[0-9]+)?$/.test(v.budget)) throw new UsageError(`--budget ${v.budget} is not an amount in USD (like 25 or 2.50)`);
  const period = v["budget-period"];
  if (period !== undefined && !["day", "week", "month", "total"].includes(period)) throw new UsageError("--budget-period is day, week, month or total");
  if (period !== undefined && v.budget === undefined) throw new UsageError("--budget-period needs --budget");
  return {
    ...(rpm || tpm ? { rate_limits: { ...(rpm ? { rpm } : {}), ...(tpm ? { tpm } : {}) } } : {}),
    ...(v.budget !== undefined ? { budget: { usd: v.budget, ...(period ? { period } : {}) } } : {}),
  };
}

const need = (v: string | undefined, flag: string, sub: string): string => {
  if (!v) throw new UsageError(`keys ${sub}: ${flag} is required`);
  return v;
};

/** --config, else ./gateway.yaml when there is one (never the package's embedded default). */
function configFile(v: Values, sub: string): string {
  const f = v.config ?? (existsSync("gateway.yaml") ? "gateway.yaml" : undefined);
  if (!f) throw new CommandFailed(`keys ${sub}: no gateway.yaml here; pass --config FILE (or --url to use a running gateway's admin API)`);
  const abs = resolve(f);
  if (!existsSync(abs)) throw new CommandFailed(`keys ${sub}: ${f} does not exist`);
  return abs;
}

/** Under a lock, written whole (locked-edit.ts): concurrent commands each keep their change, readers never see half. */
const edit = (file: string, change: (text: string) => string | Promise<string>) =>
  lockedEdit(file, change, { warn: (m) => process.stderr.write(`keys: ${m}\n`) });

/**
 * An id that a key created through the admin API already has in this project is refused: the running gateway would
 * refuse the reload (core/keys/id-clash.ts). A store that cannot be asked leaves the check to that reload.
 */
async function freeInStore(file: string, project: string, id: string, flag: string): Promise<void> {
  const [{ storedKeyWithId }, { StoreSchemaError }] = await Promise.all([import("./stored-key.ts"), import("../store/schema-version.ts")]); // only for these edits
  let found;
  try {
    found = await storedKeyWithId(file, project, id);
  } catch (err) {
    // A store a newer release wrote: the gateway.yaml that names it is one this release must not edit keys in.
    if (err instanceof StoreSchemaError) throw new CommandFailed(`the gateway's store refused: ${err.message}; ${file} was not changed`);
    throw err;
  }
  const { key, unchecked } = found;
  if (key) {
    throw new CommandFailed(`project ${project} already has a key ${id}, created through the admin API (${new Date(key.createdAt).toISOString()}` +
      `${key.createdBy ? ` by ${key.createdBy}` : ""}) and kept in the gateway's store: the gateway would refuse gateway.yaml; pass another ${flag}`);
  }
  if (unchecked) process.stderr.write(`keys: could not check the gateway's store for a key ${project}/${id}: ${unchecked}. A running gateway refuses the reload if the id is taken there.\n`);
}

// ---- the admin API ----

/** --url as given: an http(s) URL, else a bad option value (exit 2), not a gateway that could not be reached. */
function gatewayUrl(given: string): string {
  let url: URL | undefined;
  try {
    url = new URL(given);
  } catch { /* said below */ }
  if (url?.protocol !== "http:" && url?.protocol !== "https:") throw new UsageError(`--url ${given} is not an http:// or https:// URL (like http://127.0.0.1:8787)`);
  return given.replace(/\/+$/, "");
}

async function api(v: Values, method: string, path: string, body?: unknown): Promise<any> {
  const base = gatewayUrl(v.url!);
  const key = v["admin-key"] ?? process.env.MG_ADMIN_KEY;
  if (!key) throw new UsageError("--url needs an admin key: --admin-key mg_admin_… or MG_ADMIN_KEY");
  const url = `${base}/admin/v1${path}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new CommandFailed(`cannot reach ${url}: ${(err as Error).message}`);
  }
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CommandFailed(`${method} ${url}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`);
  }
  if (!res.ok) {
    const message = `${method} ${url}: HTTP ${res.status} ${json?.error?.code ?? ""}: ${json?.error?.message ?? text.slice(0, 200)}`;
    // The API refused an option as given (--expires sent as expires_at): exit 2, as when the command refuses it itself.
    throw res.status === 400 && ["expires_at", "overlap_seconds"].includes(json?.error?.param) ? new UsageError(message) : new CommandFailed(message);
  }
  return json;
}

const enc = encodeURIComponent;

function table(rows: Record<string, unknown>[]): string {
  const cols = ["project", "id", "source", "status", "expires_at", "limits", "last_used_at"];
  const cells = rows.map((r) => cols.map((c) => String(r[c] ?? "-")));
  const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (xs: string[]) => xs.map((x, i) => x.padEnd(widths[i]!)).join("  ").trimEnd() + "\n";
  return line(cols) + cells.map(line).join("");
}

const limitsText = (k: { rate_limits?: { rpm?: number; tpm?: number } | null; budget?: { usd: string; period?: string } | null }) =>
  [k.rate_limits?.rpm ? `${k.rate_limits.rpm} rpm` : "", k.rate_limits?.tpm ? `${k.rate_limits.tpm} tpm` : "", k.budget ? `$${k.budget.usd}/${k.budget.period ?? "month"}` : ""].filter(Boolean).join(", ") || "-";

async function list(v: Values): Promise<number> {
  let rows: Record<string, any>[];
  if (v.url) {
    rows = (await api(v, "GET", `/keys${v.project ? `?project=${enc(v.project)}` : ""}`)).keys;
  } else {
    // The file as `check` reads it (a file it refuses is refused here, ConfigError), each key as the admin API shows
    // it: the same fields from both sources, those only a gateway or its store knows null.
    const [{ loadConfig }, { yamlKeyView }] = await Promise.all([import("../config/load.ts"), import("../admin/key-view.ts")]);
    // Unset variables are no problem here (a shell without the production secrets): only gateway.yaml itself is read.
    const file = configFile(v, "list");
    const config = await loadConfig(file, { allowUnset: true });
    // A project the file does not declare is an error, as the admin API's 404 is for --url, not an empty table.
    if (v.project && !config.projects.has(v.project)) throw new CommandFailed(`project ${v.project} is not declared in ${file}`);
    const now = Date.now();
    rows = [...config.projects]
      .filter(([project]) => !v.project || project === v.project)
      .flatMap(([project, p]) => p.config.keys.map((k) => yamlKeyView(project, k, undefined, now)));
  }
  if (v.json) out(JSON.stringify(rows, null, 2) + "\n");
  else out(table(rows.map((r) => ({ ...r, limits: limitsText(r) }))) + (v.url ? "" : "(gateway.yaml's keys; keys created through the admin API: --url)\n"));
  return 0;
}

async function create(v: Values): Promise<number> {
  const expires = futureDate(v.expires, "--expires");
  if (v.admin) {
    const scope = v.scope;
    if (scope !== "read" && scope !== "write") throw new UsageError("keys new --admin: --scope read or --scope write is required");
    const key = newAdminKey();
    const id = v.id ?? `admin-${new Date().toISOString().slice(0, 10)}-${key.slice(-4).toLowerCase().replace(/[^a-z0-9]/g, "x")}`;
    const entry = { id, sha256: sha256Hex(key), scope, ...(expires ? { expires_at: expires } : {}) };
    if (!v.config) {
      out(`${key}\n\nThis admin key is shown once. Paste this line under admin_keys: in gateway.yaml:\n  - { id: ${id}, sha256: "${entry.sha256}", scope: ${scope}${expires ? `, expires_at: "${expires}"` : ""} }\n`);
      return 0;
    }
    const file = configFile(v, "new");
    await edit(file, (t) => addAdminKey(t, entry));
    out(`${key}\n\nThis admin key is shown once. Added admin key ${id} (${scope}) to ${file}.\n`);
    return 0;
  }
  const project = need(v.project, "--project", "new");
  const limits = limitsOf(v);
  if (v.url) {
    const r = await api(v, "POST", "/keys", { project, ...(v.id ? { id: v.id } : {}), ...(v.sandbox ? { sandbox: true } : {}), ...(expires ? { expires_at: expires } : {}), ...limits });
    out(`${r.key}\n\nThis key is shown once. Created key ${r.project}/${r.id} in the gateway's store (every replica accepts it now).\n`);
    return 0;
  }
  const key = newApiKey(v.sandbox === true);
  const id = v.id ?? `key-${new Date().toISOString().slice(0, 10)}-${key.slice(-4).toLowerCase()}`;
  const entry = { id, sha256: sha256Hex(key), ...(expires ? { expires_at: expires } : {}), ...limits };
  if (!v.config) {
    const extra = Object.entries(limits).map(([k, x]) => `, ${k}: { ${Object.entries(x).map(([a, b]) => `${a}: ${a === "usd" ? JSON.stringify(b) : b}`).join(", ")} }`).join("");
    out(`${key}\n\nThis key is shown once. Paste this line under projects.${project}.keys in gateway.yaml (or pass --config gateway.yaml to have it added):\n` +
      `      - { id: ${id}, sha256: "${entry.sha256}"${expires ? `, expires_at: "${expires}"` : ""}${extra} }\n`);
    return 0;
  }
  const file = configFile(v, "new");
  await freeInStore(file, project, id, "--id");
  await edit(file, (t) => addProjectKey(t, project, entry));
  out(`${key}\n\nThis key is shown once. Added key ${project}/${id} to ${file}.\n`);
  return 0;
}

async function revoke(v: Values): Promise<number> {
  const project = need(v.project, "--project", "revoke");
  const id = need(v.id, "--id", "revoke");
  if (v.url) {
    await api(v, "POST", `/keys/${enc(project)}/${enc(id)}/revoke`, {});
    out(`Revoked ${project}/${id} (refused on every replica within the gateway's store.key_refresh_ms).\n`);
    return 0;
  }
  const file = configFile(v, "revoke");
  await edit(file, (t) => setProjectKeyField(t, project, id, "revoked", true));
  out(`Revoked ${project}/${id} in ${file} (refused as soon as the gateway reloads it).\n`);
  return 0;
}

async function rotate(v: Values): Promise<number> {
  const project = need(v.project, "--project", "rotate");
  const id = need(v.id, "--id", "rotate");
  const overlap = overlapSeconds(v.overlap) ?? 3600;
  const expires = futureDate(v.expires, "--expires");
  const expiry = (newId: string, at: unknown) => (at ? `; ${project}/${newId} expires at ${at}` : "");
  if (v.url) {
    const body = { overlap_seconds: overlap, ...(v["new-id"] ? { id: v["new-id"] } : {}), ...(expires ? { expires_at: expires } : {}) };
    const r = await api(v, "POST", `/keys/${enc(project)}/${enc(id)}/rotate`, body);
    out(`${r.key}\n\nThis key is shown once. ${project}/${r.id} replaces ${project}/${id}, which works until ${r.previous?.expires_at ?? "now"}${expiry(r.id, r.expires_at)}.\n`);
    return 0;
  }
  const file = configFile(v, "rotate");
  const key = newApiKey(v.sandbox === true); // gateway.yaml keeps no trace of the old key's kind: --sandbox says it
  let newId = v["new-id"];
  let expiresAt = "";
  let newExpiry: string | undefined;
  await edit(file, async (text) => {
    const keys = yamlKeys(text);
    const old = keys.find((k) => k.project === project && k.id === id);
    if (!old) throw new YamlEditError(`project ${project} has no key ${id} in ${file}`);
    const now = Date.now();
    const refused = rotationRefusal(keys, old, now, expires);
    if (refused) throw new YamlEditError(refused);
    const until = now + overlap * 1000;
    const oldExpiry = old.expires_at ? Date.parse(old.expires_at) : Infinity;
    expiresAt = new Date(Math.min(until, oldExpiry)).toISOString().replace(/\.\d{3}Z$/, "Z");
    // A new key that dies while the key it replaces still works would cut its clients off before they moved over.
    if (expires !== undefined && Date.parse(expires) < Date.parse(expiresAt)) {
      throw new UsageError(`--expires ${expires} is before the end of the overlap (${expiresAt}), when ${project}/${id} stops working: ` +
        "the new key would expire while the key it replaces still works; give a later date or a shorter --overlap");
    }
    newId ??= successorId(id, new Set(keys.filter((k) => k.project === project).map((k) => k.id)));
    await freeInStore(file, project, newId, "--new-id");
    // --expires, else the old key's expiry, its own here (a rotated key is refused above), never an overlap's end:
    // what the admin API's rotate does without expires_at.
    newExpiry = expires ?? old.expires_at;
    const entry = {
      id: newId, sha256: sha256Hex(key), ...(newExpiry ? { expires_at: newExpiry } : {}), ...(old.rate_limits ? { rate_limits: old.rate_limits } : {}),
      ...(old.budget ? { budget: old.budget } : {}),
    };
    // The pair is recorded in comments, not fields: an earlier release's gateway must still load the file.
    let next = addProjectKey(text, project, entry as unknown as Record<string, Value>, id);
    next = setProjectKeyField(next, project, id, "expires_at", expiresAt);
    next = noteOnProjectKey(next, project, id, rotationNote("to", newId));
    return noteOnProjectKey(next, project, newId, rotationNote("from", id));
  });
  out(`${key}\n\nThis key is shown once. Added ${project}/${newId} to ${file}${expiry(newId!, newExpiry)}; ${project}/${id} now expires at ${expiresAt}.\n`);
  return 0;
}

const RUN = { list, new: create, revoke, rotate };

export async function keysCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const run = Object.hasOwn(RUN, sub ?? "") ? RUN[sub as keyof typeof RUN] : undefined;
  if (!run) {
    // A mistyped subcommand is a usage error like a mistyped option: say which, exit 2.
    process.stderr.write(`keys: ${sub === undefined ? `which one? ${SUBCOMMANDS}` : `unknown subcommand ${JSON.stringify(sub)} (${SUBCOMMANDS})`}\n${USAGE}`);
    return 2;
  }
  const { values } = parseArgs({ args: rest, options: OPTIONS });
  try {
    const unused = unusedOption(sub!, values);
    if (unused) throw new UsageError(unused);
    return await run(values);
  } catch (err) {
    // The file's problems as `check` prints them, one a line.
    if (err instanceof ConfigError) {
      process.stderr.write(err.problems.map(formatProblem).join("\n") + "\n");
      return 1;
    }
    if (err instanceof CommandFailed || err instanceof YamlEditError || err instanceof LockedEditError) {
      process.stderr.write(`${/^keys (?:new|list|revoke|rotate)\b/.test(err.message) ? err.message : `keys ${sub}: ${err.message}`}\n`);
      return err instanceof UsageError ? 2 : 1;
    }
    throw err;
  }
}
