import { describe, expect, it } from "vitest";
import { allPeriods, periodOf } from "./periods.ts";

const t = (iso: string) => Date.parse(iso);

describe("budget periods (UTC calendar)", () => {
  it("day, ISO week from Monday, month, total", () => {
    const now = t("2026-11-21T23:59:59.999Z"); // a Saturday
    expect(periodOf("day", now)).toEqual({ key: "day:2026-11-21", start: t("2026-11-21T00:00:00Z") });
    expect(periodOf("week", now)).toEqual({ key: "week:2026-11-16", start: t("2026-11-16T00:00:00Z") });
    expect(periodOf("month", now)).toEqual({ key: "month:2026-11", start: t("2026-11-01T00:00:00Z") });
    expect(periodOf("total", now)).toEqual({ key: "total", start: 0 });
    expect(periodOf("week", t("2026-11-16T00:00:00Z")).key).toBe("week:2026-11-16"); // Monday starts its own week
    expect(periodOf("week", t("2026-11-15T23:59:59Z")).key).toBe("week:2026-11-09"); // Sunday belongs to the previous one
  });

  it("rolls over exactly at the boundary, memoised or not", () => {
    expect(periodOf("day", t("2026-11-21T12:00:00Z")).key).toBe("day:2026-11-21");
    expect(periodOf("day", t("2026-11-22T00:00:00Z")).key).toBe("day:2026-11-22");
    expect(periodOf("day", t("2026-11-21T12:00:00Z")).key).toBe("day:2026-11-21");
    expect(periodOf("month", t("2026-12-31T23:59:59Z")).key).toBe("month:2026-12");
    expect(periodOf("month", t("2027-01-01T00:00:00Z")).key).toBe("month:2027-01");
    expect(periodOf("month", t("2027-02-28T10:00:00Z")).start).toBe(t("2027-02-01T00:00:00Z"));
    expect(allPeriods(t("2026-11-21T12:00:00Z")).map((p) => p.key)).toEqual(["day:2026-11-21", "week:2026-11-16", "month:2026-11", "total"]);
  });
});
