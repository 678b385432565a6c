// Moderation verdicts remembered for a short while, per gateway and project, by a hash of the judged text and the
// moderation's settings. An agent's tool loop resends the same user turn on every step: without this each step is
// another billed call on text already judged. Only verdicts are kept: a failure or timeout is never remembered, so
// fail_closed / fail_open act on every request the moderation could not answer.
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { GuardrailModeration } from "../../../core/generated/types/gateway.ts";
import type { Verdict } from "./call.ts";

/** How long a verdict is reused: long enough for a tool loop, short enough that a changed policy's judge is asked again. */
export const VERDICT_TTL_MS = 5 * 60_000;
const MAX_VERDICTS = 10_000;

const caches = new WeakMap<object, LRUCache<string, Verdict>>();

function cacheFor(gateway: object): LRUCache<string, Verdict> {
  let c = caches.get(gateway);
  if (!c) caches.set(gateway, (c = new LRUCache<string, Verdict>({ max: MAX_VERDICTS, ttl: VERDICT_TTL_MS })));
  return c;
}

/** The key: project, the settings a verdict depends on (provider or judge, model, policy, categories) and the text. */
export function verdictKey(project: string, spec: GuardrailModeration, text: string): string {
  const settings = JSON.stringify([spec.provider ?? null, spec.judge ?? null, spec.model ?? null, spec.policy ?? null, spec.categories ?? null]);
  return createHash("sha256").update(project).update("\0").update(settings).update("\0").update(text).digest("base64url");
}

export function cachedVerdict(gateway: object, key: string): Verdict | undefined {
  return caches.get(gateway)?.get(key);
}

export function rememberVerdict(gateway: object, key: string, verdict: Verdict): void {
  cacheFor(gateway).set(key, verdict);
}
