// Shutdown dates that Google's own pages give for upstream ids the default catalog sends to providers other than
// `openai` and `anthropic` (those are test/catalog-openai-retirements.test.ts's and the Claude API marks'): each such
// endpoint carries `retires:` so that from that day (00:00 UTC) the gateway stops sending it requests, and a model
// with no other endpoint is a 404 naming the day rather than the upstream's own error for every request.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Catalog model, provider, the upstream id that endpoint sends, the shutdown day, the official page. */
const SHUTDOWNS: [string, string, string, string, string][] = [
  ["google/imagen-4", "gemini", "imagen-4.0-generate-001", "2026-08-17", "https://ai.google.dev/gemini-api/docs/changelog"],
  ["google/veo-3", "gemini", "veo-3.0-generate-001", "2026-06-30", "https://ai.google.dev/gemini-api/docs/changelog"],
  ["google/veo-3-fast", "gemini", "veo-3.0-fast-generate-001", "2026-06-30", "https://ai.google.dev/gemini-api/docs/changelog"],
  ["anthropic/claude-3.5-haiku", "vertex", "claude-3-5-haiku@20241022", "2026-07-05", "https://cloud.google.com/vertex-ai/generative-ai/docs/deprecations/partner-models"],
];

const catalog = () => YAML.parse(readFileSync(join(root, "catalog", "models.yaml"), "utf8")).models as Record<string, any>;

describe("the default catalog's partner-platform endpoints", () => {
  it.each(SHUTDOWNS)("%s on %s (%s) retires on %s, as %s says", (id, provider, upstream, day) => {
    const ep = catalog()[id]?.endpoints.find((e: any) => e.provider === provider);
    expect(ep?.model).toBe(upstream);
    expect(ep.retires).toBe(day);
  });

  it("each marked entry's price_source names the shutdown day and the page", () => {
    const models = catalog();
    for (const [id, , , day, page] of SHUTDOWNS) {
      expect(models[id].price_source, id).toContain(`on ${day}`);
      expect(models[id].price_source, id).toContain(page);
    }
  });

  it("Claude 3.5 Haiku keeps its Bedrock endpoint (no Bedrock date is known) and points Vertex users to Haiku 4.5", () => {
    const eps = catalog()["anthropic/claude-3.5-haiku"].endpoints;
    expect(eps.find((e: any) => e.provider === "bedrock").retires).toBeUndefined();
    expect(eps.find((e: any) => e.provider === "vertex").replacement).toBe("anthropic/claude-haiku-4.5");
  });
});
