// Fallback's retry policy as pure functions: how many attempts, and how long to wait before the next one.
import type { RoutingConfig } from "../../core/generated/types/gateway.ts";

export interface RetryPolicy {
  maxAttempts: number;
  backoffMs: number;
  maxBackoffMs: number;
  maxRetryAfterMs: number;
}

export function policyOf(r: RoutingConfig | undefined): RetryPolicy {
  return {
    maxAttempts: r?.max_attempts ?? 10,
    backoffMs: r?.backoff_ms ?? 100,
    maxBackoffMs: r?.max_backoff_ms ?? 2_000,
    maxRetryAfterMs: r?.max_retry_after_ms ?? 10_000,
  };
}

/** Every target once; a request with a single target gets one retry of it. Never more than the configured cap. */
export function attemptsFor(targets: number, p: RetryPolicy): number {
  return Math.max(1, Math.min(p.maxAttempts, Math.max(targets, 2)));
}

/**
 * Wait before the next attempt, in ms; null = do not retry that endpoint.
 * Moving to another endpoint costs no wait (the failure said nothing about it). Retrying the same endpoint waits
 * exponential backoff with jitter, or the upstream's Retry-After when that is longer; a Retry-After beyond
 * maxRetryAfterMs means giving up on that endpoint rather than holding the client.
 */
export function retryDelayMs(
  p: RetryPolicy, attempt: number, sameEndpoint: boolean, retryAfterSeconds: number | undefined, random = Math.random,
): number | null {
  if (!sameEndpoint) return 0;
  const backoff = Math.min(p.maxBackoffMs, p.backoffMs * 2 ** Math.max(0, attempt - 1)) * (1 - random() * 0.25);
  if (retryAfterSeconds === undefined) return Math.round(backoff);
  const ra = retryAfterSeconds * 1000;
  if (ra > p.maxRetryAfterMs) return null;
  return Math.round(Math.max(backoff, ra));
}
