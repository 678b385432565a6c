// The cost of a request made of several model turns (the Responses mcp loop), each of which may have been served by
// another endpoint after a fallback: each turn is billed at the prices of the endpoint that served it (as that
// provider bills it, its long-prompt tier judged on the turn's own prompt), never every turn at the last attempt's —
// which may be an endpoint that only failed. What the billed usage holds beyond the turns' (a cut turn's estimate) is
// at `target`'s, the endpoint the request ended on.
import Big from "big.js";
import type { Pricing } from "../generated/types/gateway.ts";
import type { Target, Usage } from "../contracts/provider.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import { costParts, toPico, usdString } from "../money/money.ts";

type Counts = Record<string, number | undefined>;

/** The request's cost as the ledger stores it: exact decimal USD and pico-USD rounded up. */
export function requestCost(ctx: Pick<GatewayContext, "turnUsages" | "turnTargets">, usage: Usage, target: Target): { usd: string; pico: bigint } {
  const turns = ctx.turnUsages, targets = ctx.turnTargets;
  if (!turns || !targets || turns.length !== targets.length || targets.every((t) => !t || t.pricing === target.pricing)) {
    return costParts(usage, target.pricing, turns);
  }
  // Turns grouped by the prices they were served at, in order; each group takes its turns' counts out of the billed
  // usage (never more than it holds: its counts were made sane, the turns' are as reported).
  const groups = new Map<Pricing, Usage[]>();
  turns.forEach((u, i) => {
    const pricing = targets[i]?.pricing ?? target.pricing;
    const list = groups.get(pricing);
    if (list) list.push(u);
    else groups.set(pricing, [u]);
  });
  const left: Counts = { ...(usage as unknown as Counts) };
  let total = new Big(0);
  for (const [pricing, list] of groups) {
    const part: Counts = {};
    for (const k of Object.keys(left)) {
      const sum = list.reduce((n, u) => n + Math.max(0, Number((u as unknown as Counts)[k]) || 0), 0);
      part[k] = Math.min(sum, left[k] ?? 0);
      left[k] = (left[k] ?? 0) - part[k]!;
    }
    total = total.plus(costParts({ inputTokens: 0, outputTokens: 0, ...part } as Usage, pricing, list).usd);
  }
  total = total.plus(costParts({ inputTokens: 0, outputTokens: 0, ...left } as Usage, target.pricing).usd);
  return { usd: usdString(total), pico: toPico(total) };
}
