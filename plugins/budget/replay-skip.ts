// Whether the budget may let a keyed request through unreserved because the idempotency plugin will replay its kept
// answer (core/http/idempotent-replay.ts). Only when that plugin runs after the budget and nothing between them can
// answer, bill or edit the body: a response cache there served a keyed repeat at its hit price with no hold to check
// it against, every repeat adding to the spend past the budget. Plugins not named here (a custom one included) may
// answer, so with any of them in between the request reserves as any other.
import type { LoadedConfig } from "../../core/config/loaded.ts";

/**
 * Built-in plugins that never answer with something billed and leave the body as it came: they only refuse (403, 429)
 * or label the request. Not cache-marker: with caching "auto" it writes markers into the body, so the idempotency
 * plugin keeps the answer under the marked body's hash while the budget's look, before the marking, finds a mismatch.
 */
const NEVER_BILL = new Set(["auth", "allowlist", "rate-limit"]);

export function replaySkipsReservation(config: Partial<LoadedConfig>): boolean {
  const names = (config.pipeline ?? []).map((p) => p.name);
  const budget = names.indexOf("budget");
  const idempotency = names.indexOf("idempotency");
  if (budget < 0 || idempotency < budget) return false;
  return names.slice(budget + 1, idempotency).every((name) => NEVER_BILL.has(name));
}
