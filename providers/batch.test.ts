import { describe, expect, it } from "vitest";
import { planBatches, runBatches } from "./batch.ts";

describe("batches", () => {
  it("splits by count and tokens and reassembles in order", async () => {
    const items = Array.from({ length: 10 }, (_, i) => i);
    expect(planBatches(items, { maxItems: 4 }).map((b) => b.length)).toEqual([4, 4, 2]);
    expect(planBatches(items, { maxItems: 100, maxTokens: 10 }, () => 3).map((b) => b.length)).toEqual([3, 3, 3, 1]);
    // later batches finishing first must not reorder the output
    const out = await runBatches(planBatches(items, { maxItems: 3 }), async (b) => {
      await new Promise((r) => setTimeout(r, 10 - b[0]!));
      return b.map((x) => x * 2);
    });
    expect(out).toEqual(items.map((x) => x * 2));
  });
});
