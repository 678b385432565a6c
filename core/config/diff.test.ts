import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { loadConfig } from "./load.ts";
import { changeFields, diffConfigs, unchanged } from "./diff.ts";

const H = (c: string) => c.repeat(64);
const load = (config: Record<string, unknown>) => {
  const file = join(mkdtempSync(join(tmpdir(), "mg-diff-")), "gateway.yaml");
  writeFileSync(file, YAML.stringify(config));
  return loadConfig(file, { env: {} });
};
const model = (upstream = "m") => ({ endpoints: [{ provider: "sim", model: upstream }] });

describe("diffConfigs", () => {
  it("names providers, models, projects and keys added, removed and changed, and other sections that differ", async () => {
    const before = await load({
      providers: { a: { protocol: "sim" }, b: { protocol: "sim" } },
      models: { "x/keep": model(), "x/gone": model(), "x/edit": model() },
      projects: { p: { keys: [{ id: "k1", sha256: H("a") }, { id: "k2", sha256: H("b") }] }, q: { keys: [] } },
    });
    const after = await load({
      server: { max_body_bytes: 2048 },
      routing: { max_attempts: 2 },
      providers: { a: { protocol: "sim", sim: { ttft_ms: 1 } }, c: { protocol: "sim" } },
      models: { "x/keep": model(), "x/edit": model("other"), "x/new": model() },
      projects: { p: { keys: [{ id: "k1", sha256: H("c") }, { id: "k3", sha256: H("d") }], allow_models: ["x/*"] }, r: { keys: [] } },
    });
    const c = diffConfigs(before, after);
    expect(c.providers).toEqual({ added: ["c"], removed: ["b"], changed: ["a"] });
    expect(c.models).toEqual({ added: ["x/new"], removed: ["x/gone"], changed: ["x/edit"] });
    expect(c.projects).toEqual({ added: ["r"], removed: ["q"], changed: ["p"] });
    expect(c.keys).toEqual({ added: ["p/k3"], removed: ["p/k2"], changed: ["p/k1"] }); // k1's key was rotated
    expect(c.settings).toEqual(["routing", "server"]);
    expect(JSON.stringify(changeFields(c))).not.toContain(H("c"));
  });

  it("names a disabled provider added, edited or removed: projects' own keys still use it", async () => {
    const byokp = (base_url: string) => ({ protocol: "openai", base_url, api_key: "${UNSET}" }); // no key of the gateway's: disabled
    const before = await load({ providers: { byokp: byokp("http://127.0.0.1:9/v1"), gone: byokp("http://127.0.0.1:9/v1") } });
    const after = await load({ providers: { byokp: byokp("http://127.0.0.1:10/v1"), fresh: byokp("http://127.0.0.1:9/v1") } });
    expect(diffConfigs(before, after).providers).toEqual({ added: ["fresh"], removed: ["gone"], changed: ["byokp"] });
    expect(unchanged(diffConfigs(before, await load({ providers: { byokp: byokp("http://127.0.0.1:9/v1"), gone: byokp("http://127.0.0.1:9/v1") } })))).toBe(true);
  });

  it("an identical config changes nothing; a long list is cut with a count", async () => {
    const few = { models: { "x/a": model() } };
    expect(unchanged(diffConfigs(await load(few), await load(few)))).toBe(true);
    const many = { models: Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`x/m${i}`, model()])) };
    const fields = changeFields(diffConfigs(await load(few), await load(many))) as any;
    expect(fields.models.added).toHaveLength(21);
    expect(fields.models.added[20]).toBe("… 5 more");
    expect(fields.models.removed).toEqual(["x/a"]);
    expect(fields.providers).toBeUndefined();
  });
});
