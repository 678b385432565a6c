// An operator customising a catalog model the way the README says (same id under models:, the whole entry copied)
// replaces its `retires:` with the rest; `model-gateway check` still names the upstream id's retirement day, from
// the catalog entry the copy replaced.
import { afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { commands } from "../cli.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SONNET_45 = { provider: "anthropic", model: "claude-sonnet-4-5-20250929", pricing: { input: "0.000003", output: "0.000015" } };

/** The shipped gateway.yaml (catalog by absolute path, memory store) with `models` of the operator's own. */
function configWith(models: Record<string, unknown>): string {
  const config = YAML.parse(readShipped());
  config.include = (config.include as string[]).map((f) => resolve(ROOT, f));
  config.store = { kind: "memory" };
  config.metrics = { listener: false };
  config.models = models;
  const file = join(mkdtempSync(join(tmpdir(), "mg-retire-replaced-")), "gateway.yaml");
  writeFileSync(file, YAML.stringify(config));
  return file;
}
const readShipped = () => readFileSync(resolve(ROOT, "gateway.yaml"), "utf8");

async function retirementNotes(file: string): Promise<string[]> {
  vi.useFakeTimers({ toFake: ["Date"], now: Date.UTC(2026, 10, 28, 9), shouldAdvanceTime: true });
  const env = YAML.stringify(YAML.parse(readShipped()).providers).match(/\$\{(\w+)/g)!.map((v) => v.slice(2));
  for (const v of env) vi.stubEnv(v, "");
  vi.stubEnv("ANTHROPIC_API_KEY", "sk-ant-test");
  const err: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((s) => (err.push(String(s)), true));
  vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  expect(await commands.check!([file])).toBe(0);
  return err.filter((l) => l.includes("retir"));
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe("model-gateway check on a catalog model re-declared under its own id", () => {
  it("names the Claude API endpoint's retirement day, as for an entry of another name on the same upstream id", async () => {
    const said = await retirementNotes(configWith({
      "anthropic/claude-sonnet-4.5": { name: "Claude Sonnet 4.5 (mine)", context_window: 200_000, max_tokens: 64_000, endpoints: [SONNET_45] },
    }));
    expect(said).toEqual(["note: model anthropic/claude-sonnet-4.5: endpoint anthropic/claude-sonnet-4-5-20250929 is the upstream id the catalog's" +
      " entry this one replaces marks as retiring on 2026-11-30; this entry has no retires: of its own, so the gateway keeps sending it requests;" +
      " suggested replacement: anthropic/claude-sonnet-4.6\n"]);
  });

  it("a copy that keeps retires: gets the endpoint's own notice, once", async () => {
    const said = await retirementNotes(configWith({
      "anthropic/claude-sonnet-4.5": { endpoints: [{ ...SONNET_45, retires: "2026-11-30", replacement: "anthropic/claude-sonnet-4.6" }] },
    }));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain("retires on 2026-11-30 (in 2 days)");
  });
});
