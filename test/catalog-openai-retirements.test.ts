// OpenAI's shutdown dates for the upstream ids the default catalog sends to the `openai` provider, as OpenAI's own
// pages give them: each such endpoint carries `retires:` so that from that day (00:00 UTC) the gateway stops sending
// it requests and a model with no other endpoint is a 404 naming the day (test/catalog-retirement.e2e.test.ts),
// rather than the upstream's own error for every request.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Catalog model, the upstream id its `openai` endpoint sends, OpenAI's shutdown day for that id, OpenAI's page. */
const SHUTDOWNS: [string, string, string, string][] = [
  ["openai/gpt-5", "gpt-5", "2026-12-11", "https://developers.openai.com/api/docs/deprecations"],
  ["openai/gpt-5-mini", "gpt-5-mini", "2026-12-11", "https://developers.openai.com/api/docs/deprecations"],
  ["openai/gpt-5-nano", "gpt-5-nano", "2026-12-11", "https://developers.openai.com/api/docs/deprecations"],
  ["openai/o3", "o3", "2026-12-11", "https://developers.openai.com/api/reference/resources/$shared"],
  ["openai/o4-mini", "o4-mini", "2026-10-23", "https://developers.openai.com/api/reference/resources/$shared"],
  ["openai/gpt-4.1-nano", "gpt-4.1-nano", "2026-10-23", "https://developers.openai.com/api/reference/resources/$shared"],
  ["openai/gpt-image-1", "gpt-image-1", "2026-10-23", "https://developers.openai.com/api/docs/models/gpt-image-1"],
  ["openai/sora-2", "sora-2", "2026-09-24", "https://developers.openai.com/api/docs/models/sora-2"],
];

const catalog = () => YAML.parse(readFileSync(join(root, "catalog", "models.yaml"), "utf8")).models as Record<string, any>;

describe("the default catalog's OpenAI endpoints", () => {
  it.each(SHUTDOWNS)("%s (%s on the OpenAI API) retires on %s, as %s says", (id, upstream, day) => {
    const ep = catalog()[id]?.endpoints.find((e: any) => e.provider === "openai");
    expect(ep?.model).toBe(upstream);
    expect(ep.retires).toBe(day);
  });

  it("each marked entry's price_source names the shutdown day and OpenAI's page", () => {
    const models = catalog();
    for (const [id, , day] of SHUTDOWNS) {
      expect(models[id].price_source, id).toContain(`on the OpenAI API on ${day}`);
      expect(models[id].price_source, id).toMatch(/https:\/\/developers\.openai\.com\//);
    }
  });
});
