import { describe, expect, it } from "vitest";
import { gcraAdjust, gcraCharge, gcraStep } from "./gcra.ts";

describe("GCRA", () => {
  it("a fresh window takes a burst of `limit`, then refills one unit per minute/limit", () => {
    const tats = new Map<string, number>();
    const c = { key: "k", limit: 60, cost: 1 };
    let t = 1_000_000;
    for (let i = 0; i < 60; i++) expect(gcraCharge(tats, [c], t).ok).toBe(true);
    const refused = gcraCharge(tats, [c], t);
    expect(refused.ok).toBe(false);
    expect(refused.retryAfterMs).toBeCloseTo(1000, 6);
    expect(gcraCharge(tats, [c], t + 999).ok).toBe(false);
    t += 1000;
    expect(gcraCharge(tats, [c], t).ok).toBe(true);
    expect(gcraCharge(tats, [c], t).ok).toBe(false);
  });

  it("reports remaining units and the time until the window is full again", () => {
    const s = gcraStep({ key: "k", limit: 10, cost: 3 }, undefined, 0);
    expect(s.ok).toBe(true);
    expect(s.newTat).toBe(18_000); // 3 units of 6 s
    const r = gcraCharge(new Map(), [{ key: "k", limit: 10, cost: 3 }], 0).windows[0]!;
    expect(r).toEqual({ key: "k", limit: 10, remaining: 7, resetMs: 18_000 });
  });

  it("a cost above the limit is clamped so it fits an empty window; adjustments give units back or take more", () => {
    const tats = new Map<string, number>();
    expect(gcraCharge(tats, [{ key: "t", limit: 100, cost: 500 }], 0).ok).toBe(true);
    expect(gcraCharge(tats, [{ key: "t", limit: 100, cost: 1 }], 0).ok).toBe(false);
    gcraAdjust(tats, "t", 100, -50, 0);
    expect(gcraCharge(tats, [{ key: "t", limit: 100, cost: 50 }], 0).ok).toBe(true);
    gcraAdjust(tats, "t", 100, -1000, 0); // never below empty
    expect(tats.get("t")).toBe(0);
  });

  it("a zero-cost charge fits a window in debt and leaves it as it was; a refusal lists the windows without room", () => {
    const tats = new Map<string, number>();
    gcraCharge(tats, [{ key: "t", limit: 100, cost: 100 }], 0);
    gcraAdjust(tats, "t", 100, 50, 0); // 150 used: in debt
    const debt = tats.get("t");
    const zero = gcraCharge(tats, [{ key: "r", limit: 5, cost: 1 }, { key: "t", limit: 100, cost: 0 }], 0);
    expect(zero).toMatchObject({ ok: true, refused: [] });
    expect(zero.windows.map((w) => w.remaining)).toEqual([4, 0]);
    expect(tats.get("t")).toBe(debt);
    expect(gcraCharge(tats, [{ key: "r", limit: 5, cost: 1 }, { key: "t", limit: 100, cost: 1 }], 0)).toMatchObject({ ok: false, refused: [1] });
  });
});
