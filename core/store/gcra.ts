// Generic cell rate algorithm: `limit` units per minute that refill continuously (like OpenAI's limits).
// State per window is the theoretical arrival time (tat) and the limit it was written under: a changed limit (a key's
// PATCH, a reload) reads the units still owed at the new rate (rescaled), not the old rate's time debt, and stores the
// window back at the new rate on that first read, charged, refused or only looked at: a debt left in the old rate's
// units would keep draining at the old pace (a lowered limit forgotten within seconds, a raised one refilling slowly).
// Each window also keeps when it was written: after the clock steps back (an NTP correction) its debt is read from
// now, not from a time that has not come yet (which would refuse the key for as long as the step).
// The Redis backend runs the same arithmetic in Lua (redis-scripts.ts); keep the two in step.
import type { RateCharge, RateResult, RateState } from "./types.ts";

export const WINDOW_MS = 60_000;
const EPS = 1e-6;

/** One window's state: its tat, the limit that tat was written under, and when it was written. */
export interface GcraWindow {
  tat: number;
  limit: number;
  /** The clock when it was written: a later time than now means the clock stepped back since (an NTP correction). */
  at?: number;
}

/** Written at a time later than now: the clock stepped back since. */
function steppedBack(stored: GcraWindow, now: number): boolean {
  return stored.at !== undefined && stored.at > now;
}

/**
 * The window's tat at `limit`: what it owes past `now` is units at its old limit's interval, owed again at the new
 * one's (raising a limit does not leave the old debt blocking; lowering it does not forget the usage). Never before now.
 * After the clock stepped back, what it owed when written is owed from now: a tat in the not-yet-come is not usage.
 */
export function rescaledTat(stored: GcraWindow | undefined, limit: number, now: number): number {
  if (!stored) return now;
  const tat = steppedBack(stored, now) ? now + (stored.tat - stored.at!) : stored.tat;
  if (tat <= now) return now;
  if (stored.limit === limit || !(stored.limit > 0)) return tat;
  return now + ((tat - now) * stored.limit) / limit;
}

/**
 * The window's tat at `limit` (rescaledTat), stored back under `limit` when it was written under another, and as of
 * now when the clock stepped back since (else its debt would not drain until the clock caught up).
 */
export function readWindow(tats: Map<string, GcraWindow>, key: string, limit: number, now: number): number {
  const stored = tats.get(key);
  const tat = rescaledTat(stored, limit, now);
  if (stored && (steppedBack(stored, now) || (stored.limit !== limit && tat > now))) tats.set(key, { tat, limit, at: now });
  return tat;
}

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

export function gcraStep(charge: RateCharge, stored: GcraWindow | undefined, now: number): GcraStep {
  const interval = WINDOW_MS / charge.limit;
  const cost = Math.min(charge.cost, charge.limit); // a request larger than the whole window still fits an empty one
  const tat = rescaledTat(stored, charge.limit, now);
  const newTat = tat + cost * interval;
  // Nothing to charge (count_tokens against a token window) always fits, a window in debt included, and changes nothing.
  const ok = cost === 0 || newTat - now <= WINDOW_MS + EPS;
  return { ok, tat, newTat, retryAfterMs: ok ? 0 : newTat - WINDOW_MS - now };
}

/** All-or-nothing over several windows against a map of windows (memory and SQLite backends). */
export function gcraCharge(tats: Map<string, GcraWindow>, charges: RateCharge[], now: number): RateResult {
  // Each window is read (and stored at its limit, when that changed) before it is judged: a refused request's too.
  const steps = charges.map((c) => gcraStep(c, { tat: readWindow(tats, c.key, c.limit, now), limit: c.limit }, now));
  const ok = steps.every((s) => s.ok);
  if (ok) steps.forEach((s, i) => { const c = charges[i]!; if (c.cost > 0) tats.set(c.key, { tat: s.newTat, limit: c.limit, at: now }); });
  if (tats.size > 10_000) for (const [k, w] of tats) if (w.tat < now) tats.delete(k);
  const windows = steps.map((s, i) => windowState(charges[i]!, ok ? s.newTat : s.tat, now));
  const refused: number[] = [];
  steps.forEach((s, i) => { if (!s.ok) refused.push(i); });
  return { ok, windows, retryAfterMs: ok ? 0 : Math.max(...steps.map((s) => s.retryAfterMs)), refused };
}

export function gcraAdjust(tats: Map<string, GcraWindow>, key: string, limit: number, delta: number, now: number): void {
  const tat = readWindow(tats, key, limit, now);
  tats.set(key, { tat: Math.max(now, tat + delta * (WINDOW_MS / limit)), limit, at: now });
}
