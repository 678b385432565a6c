import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { COMPOSITION_ROOT, cycles, importGraph, layerViolations } from "./check-layers.ts";

const graph = (edges: Record<string, string[]>) => new Map(Object.entries(edges));

describe("check-layers", () => {
  it("finds a cycle, type imports and self-imports included, and nothing in a DAG", () => {
    expect(cycles(graph({ "core/a.ts": ["core/b.ts"], "core/b.ts": ["plugins/c.ts"], "plugins/c.ts": ["core/a.ts"] })))
      .toEqual([["core/a.ts", "core/b.ts", "plugins/c.ts"]]);
    expect(cycles(graph({ "core/a.ts": ["core/a.ts"] }))).toEqual([["core/a.ts"]]);
    expect(cycles(graph({ "core/a.ts": ["core/b.ts"], "core/b.ts": [], "plugins/c.ts": ["core/a.ts", "core/b.ts"] }))).toEqual([]);
  });

  it("flags core files other than the composition root that import plugins/ or providers/", () => {
    const g = graph({
      [COMPOSITION_ROOT]: ["plugins/index.ts", "providers/registry.ts"],
      "core/x.ts": ["providers/types.ts", "core/y.ts"],
      "core/x.test.ts": ["plugins/index.ts"],
      "plugins/index.ts": ["core/x.ts"],
      "providers/gemini/chat.ts": ["plugins/stream-transcoder/index.ts", "core/x.ts"],
    });
    expect(layerViolations(g)).toEqual(["core/x.ts -> providers/types.ts", "providers/gemini/chat.ts -> plugins/stream-transcoder/index.ts"]);
  });

  it("flags a plugin importing another plugin's files, not its own or core", () => {
    const g = graph({
      "plugins/budget/index.ts": ["plugins/budget/estimate.ts", "core/metering/meter.ts", "plugins/usage-metering/meter.ts"],
      "plugins/budget/order.test.ts": ["plugins/allowlist/index.ts"],
      "plugins/index.ts": ["plugins/budget/index.ts"],
    });
    expect(layerViolations(g)).toEqual(["plugins/budget/index.ts -> plugins/usage-metering/meter.ts"]);
  });

  it("reads type-only imports and re-exports from the source", () => {
    const g = importGraph(resolve(import.meta.dirname, ".."));
    // context.ts only has `import type` lines: they must be edges too.
    expect(g.get("core/pipeline/context.ts")).toContain("core/contracts/provider.ts");
    expect(g.get("core/builtins.ts")).toContain("plugins/index.ts");
  });

  it("the tree has no import cycle and one composition root", () => {
    const g = importGraph(resolve(import.meta.dirname, ".."));
    expect(cycles(g)).toEqual([]);
    expect(layerViolations(g)).toEqual([]);
  });
});
