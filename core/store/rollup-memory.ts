// Rollups held in this process (the memory store): per hour and per day, a map of group -> sums, updated by each
// record as it lands.
import type { UsageQuery, UsageRow } from "../contracts/ledger-reader.ts";
import type { LedgerEntry } from "./types.ts";
import { UsageAccumulator, addCounts, countsOf, dayOf, groupMatches, groupOf, hourOf, planUsage, zeroCounts, type RollupCounts, type RollupGroup } from "./rollup.ts";

type Buckets = Map<number, Map<string, { g: RollupGroup; c: RollupCounts }>>;

export class MemoryRollups {
  private readonly hours: Buckets = new Map();
  private readonly days: Buckets = new Map();

  add(e: LedgerEntry): void {
    const g = groupOf(e);
    const c = countsOf(e);
    const k = [g.project, g.key, g.model, g.provider, g.endpoint, g.sandbox ? 1 : 0].join("\u0000");
    for (const [table, start] of [[this.hours, hourOf(e.ts)], [this.days, dayOf(e.ts)]] as const) {
      let groups = table.get(start);
      if (!groups) table.set(start, (groups = new Map()));
      let row = groups.get(k);
      if (!row) groups.set(k, (row = { g, c: zeroCounts() }));
      addCounts(row.c, c);
    }
  }

  usage(q: UsageQuery): UsageRow[] {
    const p = planUsage(q);
    const acc = new UsageAccumulator(p);
    for (const s of p.scans) {
      const table = s.table === "hour" ? this.hours : this.days;
      for (const [start, groups] of table) {
        if (start < s.from || start >= s.to) continue;
        for (const { g, c } of groups.values()) if (groupMatches(p, g)) acc.add(start, g, c);
      }
    }
    return acc.result();
  }
}
