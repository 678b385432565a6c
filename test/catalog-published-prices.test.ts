// Catalog prices and limits a provider's own page states, as the gateway loads them from the shipped gateway.yaml:
// what each request on that endpoint is billed, and the largest answer it may ask for.
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { loadConfig } from "../core/config/load.ts";
import { makeServiceAccount } from "./upstreams/vertex-auth.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));

/** The shipped gateway.yaml, its catalog by absolute path and a memory store. */
async function shipped() {
  const config = YAML.parse(readFileSync(join(ROOT, "gateway.yaml"), "utf8"));
  config.include = (config.include as string[]).map((f) => resolve(ROOT, f));
  config.store = { kind: "memory" };
  config.metrics = { listener: false };
  const file = join(mkdtempSync(join(tmpdir(), "mg-prices-")), "gateway.yaml");
  writeFileSync(file, YAML.stringify(config));
  // Keys for every provider whose endpoints are checked here: a provider without one drops its endpoints.
  const sa = makeServiceAccount("http://127.0.0.1:9/token");
  return loadConfig(file, { env: {
    GROQ_API_KEY: "gsk-test", ANTHROPIC_API_KEY: "sk-ant-test", AWS_ACCESS_KEY_ID: "AKIDTEST", AWS_SECRET_ACCESS_KEY: "secret",
    GOOGLE_APPLICATION_CREDENTIALS: sa.file,
  } });
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
  // https://platform.claude.com/docs/en/about-claude/pricing: Opus 4.6 $5 input, $6.25 / $10 cache writes (5 min / 1 h),
  // $0.50 cache hits, $25 output per 1M; Sonnet 4.6 $3, $3.75 / $6, $0.30, $15. The models' pages
  // (platform.claude.com/docs/en/models/{opus,sonnet}-4-6/overview): 1M context, 128K output, one price at any length.
  // Ids on each platform from the models table (platform.claude.com/docs/en/docs/legacy-model-guide).
  const CLAUDE_46: [string, Record<string, string>, Record<string, string>][] = [
    ["anthropic/claude-opus-4.6",
      { anthropic: "claude-opus-4-6", vertex: "claude-opus-4-6", bedrock: "global.anthropic.claude-opus-4-6-v1" },
      { input: "0.000005", output: "0.000025", input_cache_write: "0.00000625", input_cache_write_1h: "0.00001", input_cache_read: "0.0000005" }],
    ["anthropic/claude-sonnet-4.6",
      { anthropic: "claude-sonnet-4-6", vertex: "claude-sonnet-4-6", bedrock: "global.anthropic.claude-sonnet-4-6" },
      { input: "0.000003", output: "0.000015", input_cache_write: "0.00000375", input_cache_write_1h: "0.000006", input_cache_read: "0.0000003" }],
  ];
  for (const [model, ids, prices] of CLAUDE_46) {
    it(`${model} is served on the Claude API, Vertex AI and Bedrock at Anthropic's list price, 1M context, 128K out`, async () => {
      const cfg = await shipped();
      expect(cfg.models.has(model), model).toBe(true);
      for (const [provider, upstream] of Object.entries(ids)) {
        const ep = endpoint(cfg, model, provider);
        expect(ep, `${model} on ${provider}`).toBeDefined();
        expect(ep.upstreamModel).toBe(upstream);
        expect(ep.pricing).toMatchObject(prices);
        // No long-context tier: the pages give one price up to the whole 1M window.
        expect(ep.pricing.long_context).toBeUndefined();
        expect(ep.contextWindow).toBe(1000000);
        expect(ep.maxTokens).toBe(128000);
      }
    });
  }
});
