// How figures are written: money exactly as the admin API gives it (a decimal string; never through a float),
// counts with separators, durations in ms or s, times in the browser's zone with the ISO time on hover.

/** "1234.5" -> "$1,234.5": the API's exact decimal, grouped. */
export function usd(s: string | null | undefined): string {
  if (s === null || s === undefined) return "—";
  const neg = s.startsWith("-");
  const [int = "0", frac] = (neg ? s.slice(1) : s).split(".");
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${neg ? "-" : ""}$${grouped}${frac ? `.${frac}` : ""}`;
}

export const int = (n: number | null | undefined): string => (n === null || n === undefined ? "—" : Math.round(n).toLocaleString("en-US"));

export function ms(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return "—";
  return n < 1000 ? `${Math.round(n * 10) / 10} ms` : `${(n / 1000).toFixed(2)} s`;
}

export const pct = (x: number | null | undefined, digits = 1): string => (x === null || x === undefined || !Number.isFinite(x) ? "—" : `${(x * 100).toFixed(digits)}%`);

const pad = (n: number) => String(n).padStart(2, "0");

/** Local "2026-11-26 14:03:07". */
export function when(iso: string | number | null | undefined): string {
  if (iso === null || iso === undefined) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "—";
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A span in seconds as "45 s", "12 min", "30 h", "92 d": days beyond 48 hours, either way (an expiry three months out is not "in 2217 h"). */
function span(s: number): string {
  if (s < 90) return `${s} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

/** "5 min ago", or "in 92 d" for a time to come (a key's expiry). */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "never";
  const s = Math.round((now - Date.parse(iso)) / 1000);
  return s < 0 ? `in ${span(-s)}` : `${span(s)} ago`;
}
