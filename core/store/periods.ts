// Budget periods, calendar-aligned in UTC: day, ISO week (Monday), month, or all time.
import type { Period } from "./types.ts";

export interface PeriodWindow {
  key: string;
  start: number;
}

const cached = new Map<Period, PeriodWindow & { end: number }>();

/** The period containing `now` (memoised: the same window serves every request until it ends). */
export function periodOf(period: Period, now: number): PeriodWindow {
  const c = cached.get(period);
  if (c && now >= c.start && now < c.end) return c;
  const w = computePeriod(period, now);
  const end = period === "total" ? Infinity : computePeriod(period, nextBoundaryProbe(period, w.start)).start;
  cached.set(period, { ...w, end });
  return w;
}

/** A moment certainly inside the period after the one starting at `start`. */
function nextBoundaryProbe(period: Period, start: number): number {
  const day = 86_400_000;
  return start + (period === "day" ? day : period === "week" ? 7 * day : 32 * day);
}

function computePeriod(period: Period, now: number): PeriodWindow {
  const d = new Date(now);
  const y = d.getUTCFullYear(), m = d.getUTCMonth(), day = d.getUTCDate();
  switch (period) {
    case "day": {
      const start = Date.UTC(y, m, day);
      return { key: `day:${iso(start)}`, start };
    }
    case "week": {
      const back = (d.getUTCDay() + 6) % 7; // days since Monday
      const start = Date.UTC(y, m, day - back);
      return { key: `week:${iso(start)}`, start };
    }
    case "month": {
      const start = Date.UTC(y, m, 1);
      return { key: `month:${iso(start).slice(0, 7)}`, start };
    }
    default:
      return { key: "total", start: 0 };
  }
}

/** The end of all time as a Date can hold it: "total" never ends. */
const END_OF_TIME = 8.64e15;
const bounds = new Map<string, { start: number; end: number }>();

/**
 * The moments a period key covers, [start, end): a budget hold made in them counts against that period, whatever
 * period the budget had when it was made (a reload may change it while the request runs). "total", and a key no
 * periodOf() made (tests name their own), cover all time.
 */
export function periodBounds(key: string): { start: number; end: number } {
  let b = bounds.get(key);
  if (b) return b;
  const m = /^(day|week|month):(\d{4}-\d{2}(?:-\d{2})?)$/.exec(key);
  const start = m ? Date.parse(m[1] === "month" ? `${m[2]}-01T00:00:00Z` : `${m[2]}T00:00:00Z`) : NaN;
  if (!m || Number.isNaN(start)) b = { start: 0, end: END_OF_TIME };
  else {
    const period = m[1] as Period;
    b = { start, end: computePeriod(period, nextBoundaryProbe(period, start)).start };
  }
  if (bounds.size >= 64) bounds.clear(); // a handful of live keys; never grows with time
  bounds.set(key, b);
  return b;
}

/** Every period a record at `ts` counts towards. */
export const allPeriods = (ts: number): PeriodWindow[] => (["day", "week", "month", "total"] as const).map((p) => periodOf(p, ts));

/**
 * The periods a record's cost is charged to: those its budget hold was made in (chargedAt), else those of its time.
 * A request admitted at 23:59:51 and done at 00:00:05 spends yesterday's budget, which held its worst case; charging
 * today's let a request admitted after midnight overspend it.
 */
export const chargedPeriods = (e: { ts: number; chargedAt?: number }): PeriodWindow[] => allPeriods(e.chargedAt ?? e.ts);

/**
 * The record's chargedAt for a request whose holds were made at `heldAt` and whose record is written at `ts`: set only
 * when the two fall on different UTC days (every budget period is made of whole UTC days, so otherwise they charge
 * the same periods), and never later than `ts` (a clock stepped back), so a ledger sums a period's spend as
 * `ts >= start AND (chargedAt IS NULL OR chargedAt >= start) AND COALESCE(chargedAt, ts) < end` over its
 * (project, ts) index.
 */
export function chargedAtOf(heldAt: number, ts: number): number | undefined {
  return heldAt < ts && Math.floor(heldAt / 86_400_000) !== Math.floor(ts / 86_400_000) ? heldAt : undefined;
}

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
