// What a reload changed, for its log line: providers, models, projects and keys added, removed or changed, and the
// other top-level sections whose settings differ. Names only: never a key's hash or a provider's credentials.
import type { RuntimeConfig } from "./runtime.ts";

export interface Delta {
  added: string[];
  removed: string[];
  changed: string[];
}

export interface ConfigChanges {
  providers: Delta;
  models: Delta;
  projects: Delta;
  /** `project/key-id`. */
  keys: Delta;
  /** Other top-level sections (server, routing, pipeline, ...) whose settings differ. */
  settings: string[];
}

/** Sections with a Delta of their own; `include` only moves models around, which the models delta shows. */
const ITEMIZED = new Set(["providers", "models", "projects", "include"]);

function delta(before: Map<string, string>, after: Map<string, string>): Delta {
  const d: Delta = { added: [], removed: [], changed: [] };
  for (const [name, v] of after) {
    const was = before.get(name);
    if (was === undefined) d.added.push(name);
    else if (was !== v) d.changed.push(name);
  }
  for (const name of before.keys()) if (!after.has(name)) d.removed.push(name);
  return d;
}

const mapOf = <T>(m: Map<string, T>, f: (v: T) => unknown) => new Map([...m].map(([k, v]) => [k, JSON.stringify(f(v))]));

/**
 * Every provider the file names: the enabled ones as they serve, a disabled one (no key of the gateway's own) by its
 * block, since projects' own keys still use it.
 */
function providersOf(c: RuntimeConfig): Map<string, string> {
  const out = mapOf(c.providers, (p) => p);
  for (const [name, pc] of Object.entries(c.raw.providers ?? {})) if (!out.has(name)) out.set(name, JSON.stringify({ disabled: pc }));
  return out;
}

function keysOf(c: RuntimeConfig): Map<string, string> {
  const out = new Map<string, string>();
  for (const [id, p] of c.projects) for (const k of p.config.keys ?? []) out.set(`${id}/${k.id}`, JSON.stringify(k));
  return out;
}

/**
 * `before.sectionsAsAccepted`: a worker that joined a running cluster serves the settings read only at start as the
 * gateway started, but the others' config (what its first reload is measured from, as theirs is) holds the file's.
 */
export function diffConfigs(before: RuntimeConfig & { sectionsAsAccepted?: Record<string, unknown> }, after: RuntimeConfig): ConfigChanges {
  const accepted = before.sectionsAsAccepted;
  const sections = new Set([...Object.keys(before.raw), ...Object.keys(after.raw), ...Object.keys(accepted ?? {}).filter((s) => accepted![s] !== undefined)]);
  const raw = (c: RuntimeConfig, s: string) =>
    JSON.stringify(c === before && accepted && Object.hasOwn(accepted, s) ? accepted[s] : (c.raw as Record<string, unknown>)[s]);
  return {
    providers: delta(providersOf(before), providersOf(after)),
    models: delta(mapOf(before.models, (m) => m.config), mapOf(after.models, (m) => m.config)),
    projects: delta(mapOf(before.projects, (p) => ({ ...p.config, keys: undefined })), mapOf(after.projects, (p) => ({ ...p.config, keys: undefined }))),
    keys: delta(keysOf(before), keysOf(after)),
    settings: [...sections].filter((s) => !ITEMIZED.has(s) && raw(before, s) !== raw(after, s)).sort(),
  };
}

/** Longest list of names a log line carries per delta (a replaced catalog changes dozens of models). */
const MAX_NAMES = 20;

/** The changes as log fields: empty deltas left out, long lists cut with a count of the rest. */
export function changeFields(c: ConfigChanges): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const cut = (names: string[]) => (names.length > MAX_NAMES ? [...names.slice(0, MAX_NAMES), `… ${names.length - MAX_NAMES} more`] : names);
  for (const section of ["providers", "models", "projects", "keys"] as const) {
    const d = c[section];
    const fields: Record<string, string[]> = {};
    for (const kind of ["added", "removed", "changed"] as const) if (d[kind].length) fields[kind] = cut(d[kind]);
    if (Object.keys(fields).length) out[section] = fields;
  }
  if (c.settings.length) out.settings = c.settings;
  return out;
}

export const unchanged = (c: ConfigChanges): boolean => Object.keys(changeFields(c)).length === 0;
