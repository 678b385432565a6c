import { describe, expect, it } from "vitest";
import { LocalState } from "./local.ts";

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

  it("idempotency claims: holder, duplicate, mismatch, expiry", () => {
    const s = new LocalState();
    expect(s.claim("k", "h", "o1", 1000, 0, () => undefined).state).toBe("new");
    expect(s.claim("k", "h", "o2", 1000, 10, () => undefined).state).toBe("pending");
    expect(s.claim("k", "x", "o2", 1000, 10, () => undefined).state).toBe("mismatch");
    expect(s.claim("k", "h", "o2", 1000, 1000, () => undefined).state).toBe("new"); // the first holder's lease ran out
  });
});
