import { afterEach, describe, expect, it, vi } from "vitest";
import { LocalState } from "./local.ts";
import { periodOf } from "./periods.ts";

const r = (id: string, amountPico: bigint, leaseMs = 1000) => ({ project: "p", periodKey: "total", periodStart: 0, id, amountPico, limitPico: 100n, leaseMs });

describe("local reservations", () => {
  it("keep a running sum, release exactly what was held, and drop leases a crashed request never settled", () => {
    const s = new LocalState();
    expect(s.reserve(r("a", 40n, 1000), 0n, 0).ok).toBe(true);
    expect(s.reserve(r("b", 40n, 5000), 0n, 0).ok).toBe(true);
    expect(s.reserve(r("c", 40n), 0n, 0)).toEqual({ ok: false, spentPico: 0n, reservedPico: 80n });
    s.release({ project: "p", periodKey: "total", id: "b" });
    s.release({ project: "p", periodKey: "total", id: "b" }); // twice: no effect
    expect(s.reserved("p", "total", 0)).toBe(40n);
    expect(s.reserved("p", "total", 1000)).toBe(0n); // a's lease ran out
    expect(s.reserve(r("d", 100n), 0n, 1000).ok).toBe(true);
    expect(s.reserve(r("e", 1n), 0n, 1000).ok).toBe(false);
  });

  it("a hold from before midnight does not make every reserve walk the scope's holds", () => {
    const now = Date.UTC(2026, 10, 19, 0, 0, 30); // 30 s into the day
    const today = periodOf("day", now), yesterday = periodOf("day", now - 86_400_000), month = periodOf("month", now);
    const hold = (id: string, w: { key: string; start: number }, at: number) =>
      s.reserve({ project: "p", periodKey: w.key, periodStart: w.start, id, amountPico: 1n, limitPico: 10n ** 18n, leaseMs: 900_000, at }, 0n, at);
    const s = new LocalState();
    hold("stream", yesterday, now - 60_000); // a stream begun a minute before midnight
    for (let i = 0; i < 2000; i++) hold(`t${i}`, today, now);

    const visits = countMapVisits();
    expect(hold("one-more", today, now)).toEqual({ ok: true, spentPico: 0n, reservedPico: 2001n });
    // What it cost, in entries of any Map walked: a handful, not the 2000 holds (per admission day sums).
    expect(visits()).toBeLessThan(10);
    vi.restoreAllMocks();

    // The sums still answer every period: yesterday's hold counts against yesterday and the month, not today.
    expect(s.reserved("p", today.key, now)).toBe(2001n);
    expect(s.reserved("p", yesterday.key, now)).toBe(1n);
    expect(s.reserved("p", month.key, now)).toBe(2002n);
    expect(s.reserved("p", "total", now)).toBe(2002n);
    s.release({ project: "p", periodKey: yesterday.key, id: "stream" });
    expect(s.reserved("p", yesterday.key, now)).toBe(0n);
    expect(s.reserved("p", month.key, now)).toBe(2001n);
    // Leases that ran out leave every period's sum.
    expect(s.reserved("p", month.key, now + 900_000)).toBe(0n);
  });

  it("idempotency claims: holder, duplicate, mismatch, expiry", () => {
    const s = new LocalState();
    expect(s.claim("k", "h", "o1", 1000, 0, () => undefined).state).toBe("new");
    expect(s.claim("k", "h", "o2", 1000, 10, () => undefined).state).toBe("pending");
    expect(s.claim("k", "x", "o2", 1000, 10, () => undefined).state).toBe("mismatch");
    expect(s.claim("k", "h", "o2", 1000, 1000, () => undefined).state).toBe("new"); // the first holder's lease ran out
  });
});

afterEach(() => vi.restoreAllMocks());

/** Counts the entries handed out by every Map iterator (for...of, values(), entries(), keys()) from now on. */
function countMapVisits(): () => number {
  let n = 0;
  for (const name of ["entries", "values", "keys", Symbol.iterator] as const) {
    const original = Map.prototype[name] as (this: Map<unknown, unknown>) => Iterator<unknown>;
    vi.spyOn(Map.prototype, name as "entries").mockImplementation(function (this: Map<unknown, unknown>) {
      const it = original.call(this);
      const counted = {
        next: () => {
          const r = it.next();
          if (!r.done) n++;
          return r;
        },
        [Symbol.iterator]: () => counted,
      };
      return counted as unknown as MapIterator<[unknown, unknown]>;
    });
  }
  return () => n;
}
