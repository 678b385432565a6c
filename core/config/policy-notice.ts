// A pipeline given explicitly (`pipeline:`) may leave out a plugin whose policy a project still configures: a
// `budget:` with no budget plugin is never enforced, and without usage-metering no request is recorded, so usage,
// spend and budgets see nothing. Say so when the config is loaded (`model-gateway check`, start, reload). A notice,
// not a problem: a gateway without policies is a valid choice, and configs shared by several pipelines exist.
// (Guardrails, whose absence would leak what they redact, are a problem instead: guardrails-check.ts.) Likewise a
// third-party plugin declared under `plugins:` that the pipeline leaves out.
import type { GatewayConfig, ProjectConfig } from "../generated/types/gateway.ts";

/** Each policy plugin and whether a project configures what it enforces. */
const POLICIES: [plugin: string, what: string, configured: (p: ProjectConfig) => boolean][] = [
  ["budget", "budget", (p) => p.budget !== undefined || (p.keys ?? []).some((k) => k.budget !== undefined)],
  ["rate-limit", "rate limits", (p) => p.rate_limits !== undefined || p.project_rate_limits !== undefined || (p.keys ?? []).some((k) => k.rate_limits !== undefined)],
  ["allowlist", "allow_models", (p) => p.allow_models !== undefined],
  ["response-cache", "cache", (p) => p.cache !== undefined],
];

export function unenforcedPolicyNotices(config: GatewayConfig, pipeline: readonly string[]): string[] {
  const projects = Object.entries(config.projects ?? {});
  const notices: string[] = [];
  if (!pipeline.includes("usage-metering") && projects.length) {
    notices.push("pipeline has no usage-metering: no request is recorded in the ledger, so usage, spend, budgets and the console see none of them");
  }
  for (const [plugin, what, configured] of POLICIES) {
    if (pipeline.includes(plugin)) continue;
    const named = projects.filter(([, p]) => configured(p)).map(([id]) => id);
    if (named.length) notices.push(`pipeline has no ${plugin}: ${what} not enforced for project${named.length > 1 ? "s" : ""} ${named.join(", ")}`);
  }
  return notices;
}

/**
 * A third-party plugin declared under `plugins:` is loaded and its options checked, but runs only where `pipeline:`
 * names it; the default pipeline (no `pipeline:`) has only built-ins. Left out, it is silently never run.
 */
export function unusedPluginNotices(config: GatewayConfig, pipeline: readonly string[]): string[] {
  const where = Array.isArray(config.pipeline) ? "pipeline: does not list it" : "there is no pipeline: and the default one runs only built-in plugins";
  return Object.keys(config.plugins ?? {}).filter((name) => !pipeline.includes(name))
    .map((name) => `plugin "${name}" is declared under plugins: but never runs: ${where} (add it to pipeline:)`);
}
