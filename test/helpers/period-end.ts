// A test that reads a budget period's spend, or runs requests against a budget, must run within one period: run
// across midnight UTC (or a week's or a month's end) it finds part of its spend in the next period, where the
// gateway rightly counts it. So it first waits out the end of the period, when that is near.
import { periodBounds, periodOf } from "../../core/store/periods.ts";
import type { Period } from "../../core/store/types.ts";

/** A test takes at most its timeout (testTimeout in vitest.config.ts: 30 s), and some. */
const A_TEST_MS = 35_000;

/**
 * When the current `period` ends within `ms`, waits until the next one has begun. For a hook (beforeEach: the wait,
 * at most `ms`, stays within hookTimeout's 60 s), so the test that follows runs in one period.
 */
export async function awayFromPeriodEnd(period: Period, ms = A_TEST_MS): Promise<void> {
  const now = Date.now();
  const left = periodBounds(periodOf(period, now).key).end - now;
  if (left < ms) await new Promise((r) => setTimeout(r, left + 50));
}
