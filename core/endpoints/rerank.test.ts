import { describe, expect, it } from "vitest";
import { billedSearchUnits } from "./rerank.ts";

describe("billedSearchUnits", () => {
  it("bills the units the provider reports, whatever the document count", () => {
    expect(billedSearchUnits({ results: [], searchUnits: 3 }, 250)).toBe(3);
    expect(billedSearchUnits({ results: [], searchUnits: 5 }, 10)).toBe(5); // long documents chunked: more units
  });

  it("without a figure (a provider billing tokens) or with a nonsensical one: one unit per 100 documents", () => {
    expect(billedSearchUnits({ results: [], inputTokens: 900 }, 100)).toBe(1);
    expect(billedSearchUnits({ results: [] }, 101)).toBe(2);
    expect(billedSearchUnits({ results: [], searchUnits: -1 }, 1000)).toBe(10);
    expect(billedSearchUnits({ results: [], searchUnits: Number.NaN }, 250)).toBe(3);
  });
});
