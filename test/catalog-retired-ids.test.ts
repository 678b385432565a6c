// Upstream model ids their providers have retired, with the official page that says so: a catalog endpoint naming one
// is a 404 (or 400) for every request routed to it, so the shipped catalog must name none of them.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** provider, upstream id, retired on, the provider's own page. */
const RETIRED: [string, string, string, string][] = [
  ["xai", "grok-4-0709", "2026-05-15", "https://docs.x.ai/docs/migration/may-15-retirement"],
  ["openai", "dall-e-3", "2026-05-12", "https://developers.openai.com/api/docs/models/dall-e-3"],
  ["deepseek", "deepseek-chat", "2026-07-24", "https://api-docs.deepseek.com/"],
  ["deepseek", "deepseek-reasoner", "2026-07-24", "https://api-docs.deepseek.com/"],
  // Retired on the Claude API only: Bedrock and Google Cloud still serve Opus 4.1.
  ["anthropic", "claude-opus-4-1-20250805", "2026-08-05", "https://platform.claude.com/docs/en/about-claude/pricing"],
];

describe("the default catalog", () => {
  it("routes to no upstream id its provider has retired", () => {
    const models = YAML.parse(readFileSync(join(root, "catalog", "models.yaml"), "utf8")).models as Record<string, any>;
    const routed = Object.entries(models).flatMap(([id, m]) => m.endpoints.map((e: any) => `${e.provider}/${e.model} (${id})`));
    for (const [provider, upstream, on, page] of RETIRED) {
      expect(routed.filter((r) => r.startsWith(`${provider}/${upstream} `)), `${provider} retired ${upstream} on ${on} (${page})`).toEqual([]);
    }
  });
});
