import { describe, expect, it } from "vitest";
import { pairedRatios, pairedRatioTable } from "./report.ts";
import type { Result } from "./loops.ts";

const result = (target: string, rps: number) => ({ target, rps, mode: "closed", stream: true }) as Result;

describe("pairedRatios", () => {
  it("takes each ratio within a round, then the median over rounds, not the ratio of the medians", () => {
    // The machine halves in speed in round 2: both targets drop together; their ratio holds at 0.5 in every round.
    const rounds = [
      [result("bare-proxy", 4000), result("full", 2000)],
      [result("full", 1000), result("bare-proxy", 2000)],
      [result("bare-proxy", 3000), result("full", 1500)],
    ];
    const r = pairedRatios(rounds);
    expect(r.find((x) => x.target === "full" && x.against === "bare-proxy")).toEqual({ target: "full", against: "bare-proxy", median: 0.5, min: 0.5, max: 0.5 });
    expect(r.find((x) => x.target === "bare-proxy" && x.against === "full")!.median).toBe(2);
    // The medians (3000 and 1500) would agree here; with an even count the middle two are averaged.
    const even = pairedRatios([...rounds, [result("bare-proxy", 1000), result("full", 900)]]);
    expect(even.find((x) => x.target === "full")).toMatchObject({ median: 0.5, min: 0.5, max: 0.9 });
  });

  it("prints every target against every other, with the range over rounds", () => {
    const table = pairedRatioTable([[result("bare-proxy", 100), result("full", 80)], [result("full", 90), result("bare-proxy", 100)]]);
    expect(table.split("\n")).toEqual([
      expect.stringMatching(/^req\/s ratio, per round\s+\/ bare-proxy\s+\/ full$/),
      expect.stringMatching(/^bare-proxy\s+-\s+1\.18 \(1\.11-1\.25\)$/),
      expect.stringMatching(/^full\s+0\.85 \(0\.80-0\.90\)\s+-$/),
    ]);
  });
});
