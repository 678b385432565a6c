import { beforeEach, describe, expect, it } from "vitest";
import budget from "./index.ts";
import { periodOf } from "../../core/store/periods.ts";
import { awayFromPeriodEnd } from "../../test/helpers/period-end.ts";

// The first spend read of a period sums the ledger (SQLite): it happens in setup, before the config serves, not
// on the event loop of the first budgeted request.
describe("budget setup", () => {
  // Setup reads the periods of its own moment, the test names them after: both in one day.
  beforeEach(() => awayFromPeriodEnd("day"));
  it("reads this period's spend of every budgeted project, and only those", async () => {
    const reads: unknown[][] = [];
    const gateway = { store: { spent: async (...a: unknown[]) => { reads.push(a); return 0n; } } };
    const projects = new Map<string, any>([
      ["monthly", { config: { budget: { usd: "10" } } }],
      ["daily", { config: { budget: { usd: "1", period: "day" } } }],
      ["free", { config: {} }],
    ]);
    await budget.setup!(gateway as never, undefined, { projects } as never);
    const now = Date.now();
    const month = periodOf("month", now), day = periodOf("day", now);
    expect(reads).toEqual([["monthly", month.key, month.start], ["daily", day.key, day.start]]);
  });

  it("a store that cannot answer does not fail the config load: it is logged and the first request reads again", async () => {
    const warnings: unknown[] = [];
    const gateway = {
      store: { spent: async () => { throw new Error("connect ECONNREFUSED 127.0.0.1:6379"); } },
      log: { warn: (...a: unknown[]) => warnings.push(a) },
    };
    const projects = new Map<string, any>([["monthly", { config: { budget: { usd: "10" } } }]]);
    await expect(budget.setup!(gateway as never, undefined, { projects } as never)).resolves.toEqual({ replaysAfter: false }); // no pipeline given: no idempotency after it
    expect(JSON.stringify(warnings)).toContain("ECONNREFUSED");
  });
});
