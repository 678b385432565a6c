// The console's one rule for dates: a day is a UTC day, as the ledger's daily rollups, the budgets' periods, the CLI
// (`usage --since 2026-11-01`, `keys new --expires`) and the admin API count days, and the page says "UTC" wherever it
// shows or takes one; a moment (a request, a key's last use) is shown in the browser's time (format.ts `when`).
import { when } from "./format.ts";

/** "2026-11-27": the UTC date of a moment. */
export const utcDay = (t: string | number): string => new Date(t).toISOString().slice(0, 10);

/** "2026-11-27 08:00 UTC". */
export function whenUtc(t: string | number): string {
  const iso = new Date(t).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** "UTC−08:00": the browser's offset from UTC at a moment (summer time changes it); "UTC" in UTC. */
export function zoneOffset(t: string | number = Date.now()): string {
  const off = -new Date(t).getTimezoneOffset();
  const pad = (n: number) => String(n).padStart(2, "0");
  return off === 0 ? "UTC" : `UTC${off < 0 ? "−" : "+"}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
}

/** The moment an expiry date means: the start of that UTC day, as `keys new --expires 2027-01-15` takes it. */
export const expiryOf = (day: string): string => `${day}T00:00:00.000Z`;

/** What an expiry date means, in UTC and in the browser's time: "stops working at … UTC (… your time)". */
export const expiryMeaning = (day: string): string => `stops working at ${whenUtc(expiryOf(day))} (${when(expiryOf(day)).slice(0, 16)} your time)`;
