// Query-string values of the admin API, parsed with errors that name the parameter.
import { invalidRequest } from "../errors.ts";
import { parseStrictTime } from "../strict-time.ts";

const RELATIVE = /^(\d+)(m|h|d)$/;
const UNIT: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A time: ISO 8601 (`2026-11-01`, `2026-11-01T12:00:00Z`; UTC without an offset, a date that does not exist refused),
 * ms since the epoch, or a span back from now (`24h`, `7d`, `30m`).
 */
export function timeParam(q: URLSearchParams, name: string, now = Date.now()): number | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  const rel = RELATIVE.exec(v);
  if (rel) return now - Number(rel[1]) * UNIT[rel[2]!]!;
  if (/^\d{10,16}$/.test(v)) return Number(v);
  const t = parseStrictTime(v);
  if (!t.ok) throw invalidRequest(`Invalid query parameter ${name}: ${JSON.stringify(v.slice(0, 50))} is ${t.why === "not an ISO 8601 date or time" ? "not a time (ISO 8601, UTC unless it has an offset; ms since the epoch; or 24h / 7d / 30m back from now)" : t.why}`, name);
  return t.ms;
}

export function enumParam<T extends string>(q: URLSearchParams, name: string, allowed: readonly T[], fallback: T): T {
  const v = q.get(name);
  if (v === null || v === "") return fallback;
  if (!(allowed as readonly string[]).includes(v)) throw invalidRequest(`Invalid query parameter ${name}: must be one of ${allowed.join(", ")}`, name);
  return v as T;
}

export function listParam<T extends string>(q: URLSearchParams, name: string, allowed: readonly T[]): T[] {
  const v = q.get(name);
  if (v === null || v === "") return [];
  const out = v.split(",").map((s) => s.trim()).filter(Boolean);
  for (const s of out) if (!(allowed as readonly string[]).includes(s)) throw invalidRequest(`Invalid query parameter ${name}: ${JSON.stringify(s.slice(0, 50))} is not one of ${allowed.join(", ")}`, name);
  return [...new Set(out)] as T[];
}

export function intParam(q: URLSearchParams, name: string, min: number, max: number, fallback: number): number {
  const v = q.get(name);
  if (v === null || v === "") return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw invalidRequest(`Invalid query parameter ${name}: must be an integer from ${min} to ${max}`, name);
  return n;
}

export function boolParam(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  if (v === null || v === "" || v === "false" || v === "0") return false;
  if (v === "true" || v === "1") return true;
  throw invalidRequest(`Invalid query parameter ${name}: must be true or false`, name);
}

export function stringParam(q: URLSearchParams, name: string): string | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  if (v.length > 256) throw invalidRequest(`Invalid query parameter ${name}: longer than 256 characters`, name);
  return v;
}

export const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined || !Number.isFinite(ms) ? null : new Date(ms).toISOString());
