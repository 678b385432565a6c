import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "./load.ts";
import { ConfigError, formatProblem } from "./source.ts";

async function problems(guardrails: string, extra = ""): Promise<string[]> {
  const file = join(mkdtempSync(join(tmpdir(), "mg-cfg-")), "gateway.yaml");
  writeFileSync(file, `
providers:
  oai: { protocol: openai, api_key: k }
  claude: { protocol: anthropic, api_key: k }
models:
  openai/gpt-4o-mini: { type: language, endpoints: [{ provider: oai, model: gpt-4o-mini }] }
  openai/embed: { type: embedding, endpoints: [{ provider: oai, model: e }] }
projects:
  acme:
    keys: [{ id: k1, sha256: "${"a".repeat(64)}" }]
    guardrails:
${guardrails}
${extra}`);
  try {
    await loadConfig(file, { env: {} });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => formatProblem(p).replace(file, "F"));
    throw err;
  }
  return [];
}

describe("guardrails config checks", () => {
  it("accepts rules and a moderation of either kind", async () => {
    expect(await problems(`      rules: [{ name: pii, detect: [email, card], action: redact }, { name: topic, type: allow, keywords: [billing] }]
      moderation: { provider: oai, on: [input, output], on_error: fail_open }`)).toEqual([]);
    expect(await problems(`      moderation: { judge: openai/gpt-4o-mini, categories: [violence] }`)).toEqual([]);
  });

  it("names the rule and field of each mistake, with its line", async () => {
    const p = await problems(`      rules:
        - { name: a, action: block }
        - { name: b, patterns: ["(unclosed"] }
        - { name: b, keywords: [x] }
        - { name: c, type: allow, keywords: [x], action: redact }`);
    expect(p).toEqual([
      expect.stringMatching(/^F:13:\d+: project acme: guardrail rule "a": give detect, patterns or keywords/),
      expect.stringMatching(/^F:14:\d+: project acme: guardrail rule "b": patterns\[0\] is not a valid regular expression/),
      expect.stringMatching(/^F:15:\d+: project acme: guardrail rule "b": another rule has this name/),
      expect.stringMatching(/^F:16:\d+: project acme: guardrail rule "c": an allow rule blocks or flags/),
    ]);
  });

  it("moderation: exactly one of provider or judge, an openai provider, a language model", async () => {
    expect(await problems(`      moderation: { timeout_ms: 100 }`)).toEqual([expect.stringContaining("names either provider")]);
    expect(await problems(`      moderation: { provider: claude }`)).toEqual([expect.stringContaining('"claude" must speak the openai protocol')]);
    expect(await problems(`      moderation: { provider: nope }`)).toEqual([expect.stringContaining('unknown provider "nope"')]);
    expect(await problems(`      moderation: { judge: openai/embed }`)).toEqual([expect.stringContaining("is an embedding model, not a language model")]);
  });

  it("refuses a pipeline that leaves the guardrails out while a project has them", async () => {
    const p = await problems(`      rules: [{ name: pii, detect: [email], action: redact }]`, "pipeline: [auth, router]");
    expect(p).toEqual([expect.stringContaining("projects acme have guardrails, but pipeline: does not run the guardrails plugin")]);
  });
});
