// Which usage a stream's upstream reported as final (CallOptions.reportUsage's `final`): its count of the whole
// answer, not a running one that a cut stream tops up with the estimate of its text. Kept by the object reported
// (ctx.usage is the last one an attempt reported), so a later running count is never taken for final.
import type { Usage } from "../contracts/provider.ts";

const finals = new WeakSet<Usage>();

/** Marks `usage` as the upstream's final count of the answer. */
export function markFinalUsage(usage: Usage): void {
  finals.add(usage);
}

/** Whether `usage` was reported as the upstream's final count of the answer. */
export function isFinalUsage(usage: Usage | undefined): boolean {
  return usage !== undefined && finals.has(usage);
}
