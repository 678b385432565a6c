// The gateway as it ships, for load runs: the repository's gateway.yaml (SQLite store, no `pipeline:` so every
// built-in plugin runs, the default catalog, logging as shipped: info level, one access line per request on stderr)
// through test/helpers/shipped-config.ts, with its openai provider pointed at the fake upstream and a live key with a
// budget and rate limits. The limits are the shipped helper's shape, raised so a closed loop at thousands of
// requests per second is never refused (they are still checked on every request).
import { resolve } from "node:path";
import { providerEnv, shippedConfig, SHIPPED_PROJECT } from "../../test/helpers/shipped-config.ts";
import { BENCH_KEY_SHA256 } from "./config.ts";

/** A model of the default catalog, served by the shipped `openai` provider (the fake upstream here). */
export const SHIPPED_MODEL = "openai/gpt-4o-mini";
const LIMITS = { rpm: 100_000_000, tpm: 1_000_000_000_000 };

/**
 * The config and the environment its `${VAR}`s need. `root`: the checkout whose catalog is included (another
 * checkout's gateway runs against its own catalog). The SQLite file stays as shipped, ./data/gateway.db next to the
 * written config.
 */
export function shippedBenchConfig(upstreamV1: string, root?: string): { config: Record<string, any>; env: Record<string, string> } {
  const config = shippedConfig({ openai: upstreamV1, anthropic: upstreamV1 });
  if (root) config.include = ["catalog/models.yaml"].map((f) => resolve(root, f));
  const project = config.projects[SHIPPED_PROJECT];
  project.keys.push({ id: "bench", sha256: BENCH_KEY_SHA256 });
  project.rate_limits = LIMITS;
  project.project_rate_limits = LIMITS;
  return { config, env: providerEnv(config) };
}
