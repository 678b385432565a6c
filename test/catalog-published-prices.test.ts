// Catalog prices and limits a provider's own page states, as the gateway loads them from the shipped gateway.yaml:
// what each request on that endpoint is billed, and the largest answer it may ask for.
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { loadConfig } from "../core/config/load.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));

/** The shipped gateway.yaml, its catalog by absolute path and a memory store. */
async function shipped() {
  const config = YAML.parse(readFileSync(join(ROOT, "gateway.yaml"), "utf8"));
  config.include = (config.include as string[]).map((f) => resolve(ROOT, f));
  config.store = { kind: "memory" };
  config.metrics = { listener: false };
  const file = join(mkdtempSync(join(tmpdir(), "mg-prices-")), "gateway.yaml");
  writeFileSync(file, YAML.stringify(config));
  return loadConfig(file, { env: { GROQ_API_KEY: "gsk-test" } });
}

const endpoint = (cfg: Awaited<ReturnType<typeof shipped>>, model: string, provider: string) =>
  cfg.models.get(model)!.endpoints.find((e: any) => e.provider === provider)!;

describe("published prices in the default catalog", () => {
  // https://console.groq.com/docs/models: openai/gpt-oss-120b $0.15 input / $0.60 output per 1M, 131,072 context,
  // 65,536 max completion tokens.
  it("gpt-oss-120b on Groq bills $0.60 per million output tokens and may answer 65,536 tokens", async () => {
    const ep = endpoint(await shipped(), "openai/gpt-oss-120b", "groq");
    expect(ep.pricing).toMatchObject({ input: "0.00000015", output: "0.0000006" });
    expect(ep.contextWindow).toBe(131072);
    expect(ep.maxTokens).toBe(65536);
  });
});
