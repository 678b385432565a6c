// What the drivers' opensLongContext tests share (providers/{anthropic,bedrock,vertex}/index.test.ts): a Claude
// Sonnet target, the context-1m beta, and drivers closed once the file's tests are done.
import { afterAll } from "vitest";
import type { ProviderDriver, Target } from "../core/contracts/provider.ts";

export const LONG_CONTEXT_BETA = "context-1m-2025-08-07";
export const NO_CLIENT_HEADERS = { clientHeaders: {} };
export const DRIVER_SETTINGS = { timeoutMs: 1000 };

export const sonnetTarget = (upstreamModel: string) => ({ modelId: "anthropic/claude-sonnet-4.5", provider: "p", upstreamModel, pricing: {} }) as Target;

/** Keeps each driver it is given (and returns it), closing them all after the file's tests. */
export function closedAfterAll(): <D extends ProviderDriver>(d: D) => D {
  const drivers: ProviderDriver[] = [];
  afterAll(async () => { await Promise.all(drivers.map((d) => d.close?.())); });
  return (d) => (drivers.push(d), d);
}
