import { describe, expect, it } from "vitest";
import { gcraAdjust, gcraCharge, gcraStep, type GcraWindow } from "./gcra.ts";

describe("GCRA", () => {
  it("a fresh window takes a burst of `limit`, then refills one unit per minute/limit", () => {
    const tats = new Map<string, GcraWindow>();
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
    const tats = new Map<string, GcraWindow>();
    expect(gcraCharge(tats, [{ key: "t", limit: 100, cost: 500 }], 0).ok).toBe(true);
    expect(gcraCharge(tats, [{ key: "t", limit: 100, cost: 1 }], 0).ok).toBe(false);
    gcraAdjust(tats, "t", 100, -50, 0);
    expect(gcraCharge(tats, [{ key: "t", limit: 100, cost: 50 }], 0).ok).toBe(true);
    gcraAdjust(tats, "t", 100, -1000, 0); // never below empty
    expect(tats.get("t")).toMatchObject({ tat: 0, limit: 100 });
  });

  it("a zero-cost charge fits a window in debt and leaves it as it was; a refusal lists the windows without room", () => {
    const tats = new Map<string, GcraWindow>();
    gcraCharge(tats, [{ key: "t", limit: 100, cost: 100 }], 0);
    gcraAdjust(tats, "t", 100, 50, 0); // 150 used: in debt
    const debt = tats.get("t");
    const zero = gcraCharge(tats, [{ key: "r", limit: 5, cost: 1 }, { key: "t", limit: 100, cost: 0 }], 0);
    expect(zero).toMatchObject({ ok: true, refused: [] });
    expect(zero.windows.map((w) => w.remaining)).toEqual([4, 0]);
    expect(tats.get("t")).toBe(debt);
    expect(gcraCharge(tats, [{ key: "r", limit: 5, cost: 1 }, { key: "t", limit: 100, cost: 1 }], 0)).toMatchObject({ ok: false, refused: [1] });
  });

  it("a raised limit reads the units used at the new limit: 2 of rpm 2 used leave about 98 of rpm 100, not a minute's wait", () => {
    const tats = new Map<string, GcraWindow>();
    const t = 1_000_000;
    expect([1, 2, 3].map(() => gcraCharge(tats, [{ key: "k", limit: 2, cost: 1 }], t).ok)).toEqual([true, true, false]);
    const later = t + 3000;
    const raised = [];
    for (let i = 0; i < 10; i++) raised.push(gcraCharge(tats, [{ key: "k", limit: 100, cost: 1 }], later));
    expect(raised.map((r) => r.ok)).toEqual(Array(10).fill(true));
    // The 2 less the 0.1 refilled in 3 s at rpm 2 (1.9 owed), then the 10: 11.9 of 100 used.
    expect(raised[9]!.windows[0]!.remaining).toBe(88);
  });

  it("a lowered limit keeps the usage: 5 of rpm 100 used refuse the next request at rpm 2, Retry-After at the new rate", () => {
    const tats = new Map<string, GcraWindow>();
    const t = 1_000_000;
    for (let i = 0; i < 5; i++) expect(gcraCharge(tats, [{ key: "k", limit: 100, cost: 1 }], t).ok).toBe(true);
    const lowered = gcraCharge(tats, [{ key: "k", limit: 2, cost: 1 }], t);
    expect(lowered.ok).toBe(false);
    expect(lowered.windows[0]).toMatchObject({ limit: 2, remaining: 0, resetMs: 150_000 }); // 5 units of 30 s
    expect(lowered.retryAfterMs).toBeCloseTo(120_000, 6); // the 6th fits once 4 of the 5 refilled at 2/min
  });

  it("a lowered limit keeps holding as time passes: refused reads store the window at the new limit, not the old pace", () => {
    const tats = new Map<string, GcraWindow>();
    const t = 1_000_000;
    for (let i = 0; i < 5; i++) gcraCharge(tats, [{ key: "k", limit: 100, cost: 1 }], t); // 3 s of rpm 100
    expect(gcraCharge(tats, [{ key: "k", limit: 2, cost: 1 }], t).retryAfterMs).toBeCloseTo(120_000, 6);
    // 4 s later the 3 s owed at rpm 100 would be gone; at rpm 2 the 5 requests still owe 146 s.
    const later = gcraCharge(tats, [{ key: "k", limit: 2, cost: 1 }], t + 4000);
    expect(later.ok).toBe(false);
    expect(later.retryAfterMs).toBeCloseTo(116_000, 6);
    expect(later.windows[0]).toMatchObject({ remaining: 0, resetMs: 146_000 });
    // Refilling at 2 a minute: the 6th request fits 2 minutes after the lower, not before.
    expect(gcraCharge(tats, [{ key: "k", limit: 2, cost: 1 }], t + 119_000).ok).toBe(false);
    expect(gcraCharge(tats, [{ key: "k", limit: 2, cost: 1 }], t + 120_000).ok).toBe(true);
  });

  it("a raised limit refills at the new pace while another window refuses every request", () => {
    const tats = new Map<string, GcraWindow>();
    const t = 1_000_000;
    gcraCharge(tats, [{ key: "rpm", limit: 2, cost: 2 }, { key: "tpm", limit: 1000, cost: 1000 }], t); // both full
    const refused = gcraCharge(tats, [{ key: "rpm", limit: 100, cost: 1 }, { key: "tpm", limit: 1000, cost: 1 }], t);
    expect(refused).toMatchObject({ ok: false, refused: [1] });
    expect(refused.windows[0]!.remaining).toBe(98);
    // The 2 requests are 1.2 s at rpm 100: 1.2 s later the window is empty (at rpm 2's pace it would still owe 1.98).
    expect(gcraCharge(tats, [{ key: "rpm", limit: 100, cost: 0 }], t + 1200).windows[0]!.remaining).toBe(100);
  });

  it("a correction under another limit than the window was charged at is made in units, then read at either limit", () => {
    const tats = new Map<string, GcraWindow>();
    gcraCharge(tats, [{ key: "t", limit: 1000, cost: 600 }], 0); // a reload from tpm 1000 to 10000 meanwhile
    gcraCharge(tats, [{ key: "t", limit: 10_000, cost: 400 }], 0);
    gcraAdjust(tats, "t", 1000, -500, 0); // the first request used 100 of its 600
    expect(gcraCharge(tats, [{ key: "t", limit: 10_000, cost: 0 }], 0).windows[0]!.remaining).toBe(9500);
    expect(gcraCharge(tats, [{ key: "t", limit: 1000, cost: 0 }], 0).windows[0]!.remaining).toBe(500);
  });

  it("after the clock steps back an hour, a key that used 2 of rpm 100 still has 98: the next leaves 97, not a 429 for the hour", () => {
    const tats = new Map<string, GcraWindow>();
    const rpm = { key: "k", limit: 100, cost: 1 };
    const t = 1_000_000_000;
    const hourAhead = t + 3_600_000;
    expect([gcraCharge(tats, [rpm], hourAhead).ok, gcraCharge(tats, [rpm], hourAhead).ok]).toEqual([true, true]);
    // An NTP correction: the clock is back at t.
    const after = gcraCharge(tats, [rpm], t);
    expect(after).toMatchObject({ ok: true, retryAfterMs: 0 });
    expect(after.windows[0]).toMatchObject({ remaining: 97 });
    expect(after.windows[0]!.resetMs).toBeCloseTo(1800, 6);
    // The debt drains from the step on: 1.8 s later the window is full again.
    expect(gcraCharge(tats, [{ ...rpm, cost: 0 }], t + 1800).windows[0]).toMatchObject({ remaining: 100, resetMs: 0 });
  });

  it("after a step back, debt beyond the window (a correction, a lowered limit) is still owed, from now", () => {
    const tats = new Map<string, GcraWindow>();
    const t = 1_000_000_000;
    gcraCharge(tats, [{ key: "t", limit: 100, cost: 100 }], t + 3_600_000);
    gcraAdjust(tats, "t", 100, 50, t + 3_600_000); // 150 used: 90 s of debt
    const back = gcraCharge(tats, [{ key: "t", limit: 100, cost: 1 }], t);
    expect(back.ok).toBe(false);
    expect(back.retryAfterMs).toBeCloseTo(30_600, 6);
  });
});
