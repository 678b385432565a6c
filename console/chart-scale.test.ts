import { describe, expect, it } from "vitest";
import { tickLabels, yRange } from "./chart-scale.ts";

const pct = (v: number) => `${(v * 100).toFixed(1)}%`;

describe("the y axis of a time chart", () => {
  it("spans 0 to 1 when every value is 0 or missing, so the ticks are 0%, 20%, ... and not three 0.0%", () => {
    expect(yRange(0, 0)).toEqual([0, 1]);
    expect(yRange(null, null)).toEqual([0, 1]);
  });

  it("spans 0 to 10 % above the highest value, and down to a negative one", () => {
    expect(yRange(0.2, 0.5)).toEqual([0, 0.55]);
    expect(yRange(-2, 4)[0]).toBe(-2);
  });

  it("leaves blank a tick label that repeats the one below it", () => {
    expect(tickLabels([0, 0.00002, 0.00004, 0.001], pct)).toEqual(["0.0%", "", "", "0.1%"]);
    expect(tickLabels([null, 0.2, 0.4], pct)).toEqual(["", "20.0%", "40.0%"]);
  });
});
