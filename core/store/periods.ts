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
 * `ts >= start AND (chargedAt IS NULL OR chargedAt >= start)` over its (project, ts) index.
 */
export function chargedAtOf(heldAt: number, ts: number): number | undefined {
  return heldAt < ts && Math.floor(heldAt / 86_400_000) !== Math.floor(ts / 86_400_000) ? heldAt : undefined;
}

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
