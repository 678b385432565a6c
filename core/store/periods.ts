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

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
