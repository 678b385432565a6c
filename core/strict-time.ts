// One reading of the dates and times operators type (admin API query parameters, CLI flags): ISO 8601, in UTC unless
// an offset is given, and only dates that exist. Date.parse read an offset-less time in the process's local zone
// (TZ=America/New_York moved 2026-12-01T00:00:00 to 05:00Z) and rolled impossible dates over (2030-02-30 became
// March 2).

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

export type StrictTime = { ok: true; ms: number } | { ok: false; why: string };

/**
 * `2026-11-01` (midnight UTC), `2026-11-01T12:00`, `2026-11-01T12:00:00.5Z`, `2026-11-01T12:00:00+02:00`: ms since
 * the epoch; no offset means UTC, as every time the gateway shows is. A date or time that does not exist
 * (2026-11-31, 25:00) is refused with why, never moved to another day.
 */
export function parseStrictTime(v: string): StrictTime {
  const m = ISO.exec(v.trim());
  if (!m) return { ok: false, why: "not an ISO 8601 date or time" };
  const [, y, mo, d, h = "0", mi = "0", s = "0", frac = "", zone] = m;
  const Y = Number(y), M = Number(mo), D = Number(d), H = Number(h), Mi = Number(mi), S = Number(s);
  const day = new Date(Date.UTC(Y, M - 1, D));
  // Date.UTC maps years 0-99 to 1900-1999: set the year again.
  day.setUTCFullYear(Y, M - 1, D);
  if (day.getUTCFullYear() !== Y || day.getUTCMonth() !== M - 1 || day.getUTCDate() !== D) return { ok: false, why: `no such date (${y}-${mo}-${d})` };
  if (H > 23 || Mi > 59 || S > 59) return { ok: false, why: `no such time of day (${h}:${mi}:${s})` };
  let offsetMin = 0;
  if (zone && zone.toUpperCase() !== "Z") {
    const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
    const oh = Number(z[2]), om = Number(z[3] ?? "0");
    if (oh > 23 || om > 59) return { ok: false, why: `no such offset (${zone})` };
    offsetMin = (z[1] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const ms = day.getTime() + ((H * 60 + Mi - offsetMin) * 60 + S) * 1000 + Math.floor(Number(`0.${frac || "0"}`) * 1000);
  return { ok: true, ms };
}
