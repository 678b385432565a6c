// The config snippets README.md and docs/providers.md show, taken as written, are what they say: the README's
// "Configuration" example passes `model-gateway check` and runs its plugin; the Bedrock and Vertex blocks are the
// providers the shipped gateway.yaml declares, and declare no models that would replace the catalog's entries.
import { afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { commands } from "../core/cli.ts";
import { loadConfig } from "../core/config/load.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const read = (f: string) => readFileSync(join(ROOT, f), "utf8");

/** The first ```yaml block after `heading` in `doc`. */
function block(doc: string, heading: string): string {
  const at = doc.indexOf(heading);
  expect(at, heading).toBeGreaterThanOrEqual(0);
  return /```yaml\n([\s\S]*?)```/.exec(doc.slice(at))![1]!;
}

/** The README example as a gateway.yaml in a folder of its own, beside the repo's docs/ and catalog/ (its paths are relative). */
function readmeConfig(): string {
  const yaml = block(read("README.md"), "## Configuration (`gateway.yaml`)")
    .replace("<64 hex chars>", "8d73c889f7b0cdb4f6d43d374791ef31c60f88765de7577cc2fcd01d6496d346");
  const dir = mkdtempSync(join(tmpdir(), "mg-readme-"));
  symlinkSync(join(ROOT, "docs"), join(dir, "docs"));
  symlinkSync(join(ROOT, "catalog"), join(dir, "catalog"));
  writeFileSync(join(dir, "gateway.yaml"), yaml);
  return join(dir, "gateway.yaml");
}

afterEach(() => vi.restoreAllMocks());

describe("README's Configuration example", () => {
  it("passes model-gateway check, with no note but the providers whose keys are unset and its plugin's setup left to start", async () => {
    const out: string[] = [];
    const err: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((s) => (out.push(String(s)), true));
    vi.spyOn(process.stderr, "write").mockImplementation((s) => (err.push(String(s)), true));
    expect(await commands.check!([readmeConfig()]), out.join("")).toBe(0);
    const expected = [/^note: provider "(openai|azure)" disabled: \$\w+ is not set\n$/, /^note: check does not run the setup of plugin request-tagger \(start does/];
    expect(err.filter((l) => !expected.some((re) => re.test(l)))).toEqual([]);
  });

  it("loads with its plugin in the pipeline, guardrails last, and its model as written", async () => {
    const cfg = await loadConfig(readmeConfig(), { env: {}, onNotice: () => {} });
    const names = cfg.pipeline.map((p) => p.name);
    expect(names).toContain("request-tagger");
    expect(names.at(-1)).toBe("guardrails");
    expect(cfg.models.get("openai/gpt-4o-mini")).toMatchObject({ endpoints: [] }); // openai disabled: no key in env
    expect(cfg.models.get("openai/gpt-4o-mini")!.config.context_window).toBe(128000);
  });
});

describe("docs/providers.md's Bedrock and Vertex blocks", () => {
  const shipped = YAML.parse(read("gateway.yaml"));
  for (const [heading, name] of [["## AWS Bedrock", "bedrock"], ["## Google Vertex AI", "vertex"]] as const) {
    it(`${name}: is the shipped gateway.yaml's provider, and replaces no catalog model`, () => {
      const doc = YAML.parse(block(read("docs/providers.md"), heading));
      expect(Object.keys(doc)).toEqual(["providers"]);
      expect(doc.providers).toEqual({ [name]: shipped.providers[name] });
    });
  }
});
