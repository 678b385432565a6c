// Generic cell rate algorithm: `limit` units per minute that refill continuously (like OpenAI's limits).
// State is one number per window, the theoretical arrival time (tat). The Redis backend runs the same
// arithmetic in Lua (redis-scripts.ts); keep the two in step.
import type { RateCharge, RateResult, RateState } from "./types.ts";

export const WINDOW_MS = 60_000;
const EPS = 1e-6;

export interface GcraStep {
  ok: boolean;
  tat: number;
  newTat: number;
  retryAfterMs: number;
}

/** What a window looks like to the client when its tat is `used`. */
export function windowState(c: RateCharge, used: number, now: number): RateState {
  const interval = WINDOW_MS / c.limit;
  return { key: c.key, limit: c.limit, remaining: Math.max(0, Math.floor((WINDOW_MS - (used - now)) / interval + EPS)), resetMs: Math.max(0, used - now) };
}

export function gcraStep(charge: RateCharge, storedTat: number | undefined, now: number): GcraStep {
  const interval = WINDOW_MS / charge.limit;
  const cost = Math.min(charge.cost, charge.limit); // a request larger than the whole window still fits an empty one
  const tat = Math.max(storedTat ?? now, now);
  const newTat = tat + cost * interval;
  // Nothing to charge (count_tokens against a token window) always fits, a window in debt included, and changes nothing.
  const ok = cost === 0 || newTat - now <= WINDOW_MS + EPS;
  return { ok, tat, newTat, retryAfterMs: ok ? 0 : newTat - WINDOW_MS - now };
}

/** All-or-nothing over several windows against a map of tats (memory and SQLite backends). */
export function gcraCharge(tats: Map<string, number>, charges: RateCharge[], now: number): RateResult {
  const steps = charges.map((c) => gcraStep(c, tats.get(c.key), now));
  const ok = steps.every((s) => s.ok);
  if (ok) steps.forEach((s, i) => { if (charges[i]!.cost > 0) tats.set(charges[i]!.key, s.newTat); });
  if (tats.size > 10_000) for (const [k, t] of tats) if (t < now) tats.delete(k);
  const windows = steps.map((s, i) => windowState(charges[i]!, ok ? s.newTat : s.tat, now));
  const refused: number[] = [];
  steps.forEach((s, i) => { if (!s.ok) refused.push(i); });
  return { ok, windows, retryAfterMs: ok ? 0 : Math.max(...steps.map((s) => s.retryAfterMs)), refused };
}

export function gcraAdjust(tats: Map<string, number>, key: string, limit: number, delta: number, now: number): void {
  const tat = Math.max(tats.get(key) ?? now, now);
  tats.set(key, Math.max(now, tat + delta * (WINDOW_MS / limit)));
}
