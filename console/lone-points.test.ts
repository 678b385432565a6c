import { describe, expect, it } from "vitest";
import { lonePoints } from "./lone-points.ts";

describe("lone points", () => {
  it("finds a value between idle steps, at either end, or alone; not one a line joins", () => {
    expect(lonePoints([null, 0.25, null])).toEqual([1]);
    expect(lonePoints([0.5, null, null, 3, null, 4, 5])).toEqual([0, 3]);
    expect(lonePoints([null, null, 7])).toEqual([2]);
    expect(lonePoints([7])).toEqual([0]);
    // 0 is a value (no errors in that step), not a gap.
    expect(lonePoints([0, 0, null, 0])).toEqual([3]);
    expect(lonePoints([])).toEqual([]);
  });
});
