// Keys through the admin API: list every key (gateway.yaml's and the store's), create keys for a project (kept in
// the store, accepted by every replica at once, the key shown once), change, revoke and rotate them (the old key
// keeps working for an overlap window). Keys of gateway.yaml are changed in the file (`model-gateway keys`), not here.
import type { Gateway } from "../gateway.ts";
import { GatewayError, invalidRequest } from "../errors.ts";
import { newApiKey, sha256Hex } from "../keys/keys.ts";
import type { KeyPatch, StoredKey } from "../store/api-keys-types.ts";
import type { Period } from "../store/types.ts";
import { enumParam, stringParam } from "./query.ts";
import { storedKeyView, yamlKeyView, type KeyView } from "./key-view.ts";
import type { AdminAnswer, AdminRequest } from "./route.ts";

const DEFAULT_OVERLAP_S = 3600;

function projectOr404(gw: Gateway, project: string, field?: string) {
  const p = gw.config.projects.get(project);
  if (p) return p;
  const message = `Project ${JSON.stringify(project)} is not declared in gateway.yaml (projects: ${[...gw.config.projects.keys()].join(", ") || "none"})`;
  throw field ? invalidRequest(message, field) : new GatewayError(404, "NOT_FOUND", message);
}

const inYaml = (gw: Gateway, project: string, id: string) => gw.config.projects.get(project)?.config.keys.find((k) => k.id === id);

/** A word as a POSIX shell reads it back: quoted only when it holds more than a path's usual characters. */
const shellWord = (s: string) => (/^[\w./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

function yamlOnly(gw: Gateway, project: string, id: string, what: "change" | "revoke" | "rotate"): GatewayError {
  // `model-gateway keys` revokes and rotates; it has no command that changes a key: that is an edit of its entry.
  // The file is the one this gateway loaded, named whole: without --config the command edits ./gateway.yaml of
  // wherever it runs, which is this file only when run from the gateway's directory.
  const file = gw.config.file;
  const how = what === "change"
    ? `change it there (edit its entry under projects.${project}.keys in ${file})`
    : `${what} it there (model-gateway keys ${what} --project ${project} --id ${id} --config ${shellWord(file)})`;
  return new GatewayError(409, "CONFLICT", `Key ${project}/${id} is declared in gateway.yaml: ${how}, then the gateway reloads it`,
    { details: { project, id, source: "yaml" } });
}

/** A gateway.yaml key already rotated (its entry records the successor): the command would refuse it, so say so. */
function replacedInYaml(gw: Gateway, project: string, id: string, by: string): GatewayError {
  return new GatewayError(409, "CONFLICT", `Key ${project}/${id} was already rotated to ${project}/${by}: rotate ${by} instead, in gateway.yaml ` +
    `(model-gateway keys rotate --project ${project} --id ${by} --config ${shellWord(gw.config.file)})`, { details: { project, id, source: "yaml", replaced_by: by } });
}

function parseExpiry(v: string | null | undefined, field: string, now: number): number | null | undefined {
  if (v === undefined) return undefined;
  if (v === null) return null;
  const t = Date.parse(v);
  if (!Number.isFinite(t)) throw invalidRequest(`Invalid request: ${field} is not a date-time`, field);
  if (t <= now) throw invalidRequest(`Invalid request: ${field} (${v}) is in the past`, field);
  return t;
}

const budgetOf = (b: { usd: string; period?: string } | undefined) => (b ? { usd: b.usd, period: (b.period ?? "month") as Period } : undefined);

/**
 * The store's record of a project's key, or 404 (409 for a key of gateway.yaml). The store's key wins when gateway.yaml
 * has one of the same id too (start and reload refuse that, but a replica on an older gateway.yaml can still create
 * one): the API can change only the store's, and it must be able to revoke it.
 */
async function storedOr404(gw: Gateway, project: string, id: string, what: "change" | "revoke" | "rotate"): Promise<StoredKey> {
  projectOr404(gw, project);
  const { keys } = await gw.apiKeys.list();
  const k = keys.find((s) => s.project === project && s.id === id);
  if (k) return k;
  const y = inYaml(gw, project, id);
  if (y?.replaced_by && what === "rotate") throw replacedInYaml(gw, project, id, y.replaced_by);
  if (y) throw yamlOnly(gw, project, id, what);
  throw new GatewayError(404, "NOT_FOUND", `No key ${project}/${id}`, { details: { project, id } });
}

/** Every key of the config and the store, filtered by ?project, ?source and ?status. */
export async function allKeys(gw: Gateway, q: URLSearchParams): Promise<{ keys: KeyView[]; from_cache: boolean }> {
  const project = stringParam(q, "project");
  const source = enumParam(q, "source", ["yaml", "api", "any"] as const, "any");
  const status = enumParam(q, "status", ["active", "revoked", "expired", "any"] as const, "any");
  if (project) projectOr404(gw, project);
  const now = Date.now();
  const [listed, uses] = await Promise.all([gw.apiKeys.list(), gw.apiKeys.lastUses()]);
  const out: KeyView[] = [];
  if (source !== "api") {
    for (const [pid, p] of gw.config.projects) {
      if (project && pid !== project) continue;
      for (const k of p.config.keys) out.push(yamlKeyView(pid, k, uses.get(k.sha256), now));
    }
  }
  if (source !== "yaml") {
    for (const k of listed.keys) if (!project || k.project === project) out.push(storedKeyView(k, uses.get(k.sha256), now));
  }
  out.sort((a, b) => (a.project < b.project ? -1 : a.project > b.project ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { keys: status === "any" ? out : out.filter((k) => k.status === status), from_cache: listed.fromCache };
}

export async function listKeys(r: AdminRequest): Promise<AdminAnswer> {
  return { body: await allKeys(r.gateway, r.query) };
}

export async function getKey(r: AdminRequest): Promise<AdminAnswer> {
  const { project, id } = r.params as { project: string; id: string };
  projectOr404(r.gateway, project);
  const uses = await r.gateway.apiKeys.lastUses();
  // The store's key first, as the routes that change a key address it (storedOr404).
  const { keys } = await r.gateway.apiKeys.list();
  const k = keys.find((s) => s.project === project && s.id === id);
  if (k) return { body: storedKeyView(k, uses.get(k.sha256), Date.now()) };
  const y = inYaml(r.gateway, project, id);
  if (y) return { body: yamlKeyView(project, y, uses.get(y.sha256), Date.now()) };
  throw new GatewayError(404, "NOT_FOUND", `No key ${project}/${id}`, { details: { project, id } });
}

const idTaken = (k: StoredKey) => new GatewayError(409, "CONFLICT", `Project ${k.project} already has a key ${k.id}`, { details: { field: "id", project: k.project, id: k.id } });

function notInYaml(gw: Gateway, k: StoredKey): void {
  if (inYaml(gw, k.project, k.id)) throw new GatewayError(409, "CONFLICT", `Project ${k.project} already has a key ${k.id} (in gateway.yaml)`, { details: { field: "id", project: k.project, id: k.id } });
}

/** Store a new key; 409 when the id is taken (in gateway.yaml or the store). */
async function store(gw: Gateway, k: StoredKey): Promise<void> {
  notInYaml(gw, k);
  if (!(await gw.apiKeys.create(k))) throw idTaken(k);
}

function mint(sandbox: boolean) {
  const key = newApiKey(sandbox);
  return { key, sha256: sha256Hex(key), hint: key.slice(-4) };
}

export async function createKey(r: AdminRequest): Promise<AdminAnswer> {
  const b = r.body as { project: string; id?: string; name?: string; sandbox?: boolean; expires_at?: string; rate_limits?: StoredKey["rateLimits"]; budget?: { usd: string; period?: string } };
  projectOr404(r.gateway, b.project, "project");
  const now = Date.now();
  const m = mint(b.sandbox === true);
  const k: StoredKey = {
    sha256: m.sha256, id: b.id ?? `key-${new Date(now).toISOString().slice(0, 10)}-${m.hint.toLowerCase().replace(/[^a-z0-9]/g, "x")}`,
    project: b.project, sandbox: b.sandbox === true, hint: m.hint, createdAt: now, createdBy: r.admin.id,
    expiresAt: parseExpiry(b.expires_at, "expires_at", now) ?? null, revokedAt: null,
    ...(b.name !== undefined ? { name: b.name } : {}), ...(b.rate_limits ? { rateLimits: b.rate_limits } : {}), ...(b.budget ? { budget: budgetOf(b.budget) } : {}),
  };
  await store(r.gateway, k);
  r.gateway.log.info("api key created", { project: k.project, keyId: k.id, adminKeyId: r.admin.id });
  return { status: 201, body: { key: m.key, ...storedKeyView(k, undefined, now), note: "The key is shown once: only its sha256 is kept." } };
}

export async function updateKey(r: AdminRequest): Promise<AdminAnswer> {
  const { project, id } = r.params as { project: string; id: string };
  const k = await storedOr404(r.gateway, project, id, "change");
  const b = r.body as { name?: string; expires_at?: string | null; rate_limits?: StoredKey["rateLimits"] | null; budget?: { usd: string; period?: string } | null };
  const now = Date.now();
  const patch: KeyPatch = {};
  if (b.name !== undefined) patch.name = b.name;
  if ("expires_at" in b) patch.expiresAt = parseExpiry(b.expires_at, "expires_at", now) ?? null;
  if ("rate_limits" in b) patch.rateLimits = b.rate_limits ?? undefined;
  if ("budget" in b) patch.budget = budgetOf(b.budget ?? undefined);
  const next = await r.gateway.apiKeys.update(k.sha256, patch);
  if (!next) throw new GatewayError(404, "NOT_FOUND", `No key ${project}/${id}`, { details: { project, id } });
  r.gateway.log.info("api key changed", { project, keyId: id, adminKeyId: r.admin.id, fields: Object.keys(b) });
  return { body: storedKeyView(next, undefined, now) };
}

export async function revokeKey(r: AdminRequest): Promise<AdminAnswer> {
  const { project, id } = r.params as { project: string; id: string };
  const k = await storedOr404(r.gateway, project, id, "revoke");
  const now = Date.now();
  if (k.revokedAt !== null) return { body: storedKeyView(k, undefined, now) }; // already: the first revocation stands
  const reason = (r.body as { reason?: string }).reason;
  const next = await r.gateway.apiKeys.update(k.sha256, { revokedAt: now, ...(reason ? { revokedReason: reason } : {}) });
  if (!next) throw new GatewayError(404, "NOT_FOUND", `No key ${project}/${id}`, { details: { project, id } });
  r.gateway.log.info("api key revoked", { project, keyId: id, adminKeyId: r.admin.id });
  return { body: storedKeyView(next, undefined, now) };
}

/** A key has one successor: rotating it again would leave two live keys replacing it. */
function replaced(project: string, id: string, by: string): GatewayError {
  return new GatewayError(409, "CONFLICT", `Key ${project}/${id} was already rotated to ${project}/${by}: rotate ${by} instead`, { details: { project, id, replaced_by: by } });
}

/** The default id of a rotated key: the chain's first id with -r2, -r3, ... (the first free one). */
function nextId(base: string, taken: Set<string>): string {
  const root = base.replace(/-r\d+$/, "");
  for (let n = 2; ; n++) if (!taken.has(`${root}-r${n}`)) return `${root}-r${n}`;
}

export async function rotateKey(r: AdminRequest): Promise<AdminAnswer> {
  const { project, id } = r.params as { project: string; id: string };
  const old = await storedOr404(r.gateway, project, id, "rotate");
  const now = Date.now();
  if (old.revokedAt !== null) throw new GatewayError(409, "CONFLICT", `Key ${project}/${id} is revoked: create a new key instead`, { details: { project, id } });
  if (old.expiresAt !== null && old.expiresAt <= now) throw new GatewayError(409, "CONFLICT", `Key ${project}/${id} has expired: create a new key instead`, { details: { project, id } });
  if (old.replacedBy) throw replaced(project, id, old.replacedBy);
  const b = r.body as { id?: string; overlap_seconds?: number; expires_at?: string };
  const overlapMs = (b.overlap_seconds ?? DEFAULT_OVERLAP_S) * 1000;
  const { keys } = await r.gateway.apiKeys.list();
  const taken = new Set([...keys.filter((k) => k.project === project).map((k) => k.id), ...(r.gateway.config.projects.get(project)?.config.keys.map((k) => k.id) ?? [])]);
  const until = now + overlapMs;
  const overlapEnd = old.expiresAt !== null && old.expiresAt < until ? old.expiresAt : until;
  const expiresAt = b.expires_at !== undefined ? parseExpiry(b.expires_at, "expires_at", now)! : old.expiresAt;
  // A new key that dies while the key it replaces still works would cut its clients off before they moved over.
  if (expiresAt !== null && expiresAt < overlapEnd) {
    throw invalidRequest(`Invalid request: expires_at (${b.expires_at}) is before the end of the overlap (${new Date(overlapEnd).toISOString()}), ` +
      `when ${project}/${id} stops working: the new key would expire while the key it replaces still works`, "expires_at", { overlap_end: new Date(overlapEnd).toISOString() });
  }
  const m = mint(old.sandbox);
  const fresh: StoredKey = {
    sha256: m.sha256, id: b.id ?? nextId(old.id, taken), project, sandbox: old.sandbox, hint: m.hint, createdAt: now, createdBy: r.admin.id,
    expiresAt, revokedAt: null,
    ...(old.name !== undefined ? { name: old.name } : {}), ...(old.rateLimits ? { rateLimits: old.rateLimits } : {}), ...(old.budget ? { budget: old.budget } : {}),
    rotatedFrom: old.id,
  };
  notInYaml(r.gateway, fresh);
  // One atomic step in the store: of concurrent rotations of this key, one gets its successor, the others a 409.
  const done = await r.gateway.apiKeys.rotate(old.sha256, fresh, {
    expiresAt: overlapEnd, replacedBy: fresh.id,
    ...(overlapMs === 0 ? { revokedAt: now, revokedReason: `rotated to ${fresh.id}` } : {}),
  });
  if (!done.ok) {
    if (done.reason === "replaced") throw replaced(project, id, done.replacedBy);
    if (done.reason === "revoked") throw new GatewayError(409, "CONFLICT", `Key ${project}/${id} is revoked: create a new key instead`, { details: { project, id } });
    if (done.reason === "taken") throw idTaken(fresh);
    throw new GatewayError(404, "NOT_FOUND", `No key ${project}/${id}`, { details: { project, id } });
  }
  const previous = done.previous;
  r.gateway.log.info("api key rotated", { project, keyId: id, newKeyId: fresh.id, overlapSeconds: overlapMs / 1000, adminKeyId: r.admin.id });
  return {
    status: 201,
    body: { key: m.key, ...storedKeyView(fresh, undefined, now), previous: storedKeyView(previous, undefined, now), note: "The key is shown once: only its sha256 is kept." },
  };
}
